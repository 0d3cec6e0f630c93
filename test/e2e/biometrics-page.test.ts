import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { registerCustomer, type CustomerBody } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { startStack, TestClock, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let api: Client;
let browser: Browser;
const clock = new TestClock();

beforeAll(async () => {
  stack = await startStack({ clock, env: { SANDBOX_REVIEW_DELAY: '1h' } });
  api = client(stack, await tokenFor(stack, (await createPartner(stack)).credentials.sandbox));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function openSession(customerId: string): Promise<string> {
  const response = await api(`/v3/customers/${customerId}/biometrics`, { method: 'POST' });
  expect(response.status).toBe(200);
  return ((await response.json()) as { session_url: string }).session_url;
}

const biometricsStatus = async (customerId: string) =>
  ((await (await api(`/v3/customers/${customerId}`)).json()) as CustomerBody).kyc.find(
    (item) => item.type === 'biometrics',
  )?.status;

describe('the hosted biometrics page, in a real browser', () => {
  it('lets the customer complete the capture, which submits the biometrics item', async () => {
    const customer = await registerCustomer(api);
    const url = await openSession(customer.id);
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(stack.baseUrl)) foreign.push(request.url());
    });

    await page.goto(url);
    expect(await page.locator('h1').textContent()).toBe('Biometric capture');
    await page.getByRole('button', { name: 'Complete capture' }).click();
    await page.waitForSelector('text=Capture received');
    expect(await biometricsStatus(customer.id)).toBe('submitted');

    // The spent link says so, and offers nothing to press.
    await page.goto(url);
    expect(await page.locator('h1').textContent()).toBe('Capture received');
    expect(await page.getByRole('button').count()).toBe(0);
    expect(foreign).toEqual([]); // no asset from anywhere else
    await page.close();
  });

  it('shows a replaced link as replaced, and an expired one as expired, changing nothing', async () => {
    const customer = await registerCustomer(api);
    const first = await openSession(customer.id);
    const second = await openSession(customer.id);
    const page = await browser.newPage();

    await page.goto(first);
    expect(await page.locator('h1').textContent()).toBe('This link was replaced');
    expect(await page.getByRole('button').count()).toBe(0);

    await page.goto(second);
    expect(await page.getByRole('button', { name: 'Complete capture' }).count()).toBe(1);
    clock.advance(16 * 60_000); // past the 15 minutes, while the page is open
    await page.getByRole('button', { name: 'Complete capture' }).click();
    await page.waitForSelector('text=This link has expired');
    expect(await biometricsStatus(customer.id)).toBe('pending');
    await page.close();
  });
});
