import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskEmail } from '../../src/domain/masking.js';
import { launchChromium } from '../helpers/browser.js';
import { HostedBrowser, SANDBOX_CODE } from '../helpers/hosted.js';
import { codeIn, waitForMessage } from '../helpers/mailbox.js';
import { registerCustomer, type CustomerBody } from '../helpers/customers.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { startStack, TestClock, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
let api: Client;
let production: Client;
let browser: Browser;
const clock = new TestClock();

beforeAll(async () => {
  stack = await startStack({ clock, env: { SANDBOX_REVIEW_DELAY: '1h' } });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  production = client(stack, await tokenFor(stack, partner.credentials.production));
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
  it('completes the capture only with the code sent to the customer, which submits the biometrics item', async () => {
    const customer = await registerCustomer(api);
    const url = await openSession(customer.id);
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(stack.baseUrl)) foreign.push(request.url());
    });

    await page.goto(url);
    expect(await page.locator('h1').textContent()).toBe('Captura biométrica');
    const asked = new Date(Date.now() - 1000);
    await page.getByRole('button', { name: 'Enviar código' }).click();
    await page.waitForSelector('text=Concluir a captura');
    // The page names where the code went without showing the address.
    expect(await page.content()).toContain(maskEmail(customer.email));
    expect(await page.content()).not.toContain(customer.email);
    const code = codeIn(await waitForMessage(customer.email, { after: asked }));

    // A wrong code records nothing and says how many tries are left.
    await page.getByLabel('Código').fill(code === '123456' ? '654321' : '123456');
    await page.getByRole('button', { name: 'Concluir captura' }).click();
    await page.waitForSelector('text=Restam 4 tentativas');
    expect(await biometricsStatus(customer.id)).toBe('pending');

    await page.getByLabel('Código').fill(code);
    await page.getByRole('button', { name: 'Concluir captura' }).click();
    await page.waitForSelector('text=Captura recebida');
    expect(await biometricsStatus(customer.id)).toBe('submitted');

    // The spent link says so, and offers nothing to press.
    await page.goto(url);
    expect(await page.locator('h1').textContent()).toBe('Captura recebida');
    expect(await page.getByRole('button').count()).toBe(0);
    expect(foreign).toEqual([]); // no asset from anywhere else
    await page.close();
  });

  it('refuses a POST without a code, changing nothing', async () => {
    const customer = await registerCustomer(api);
    const url = await openSession(customer.id);
    const bare = await new HostedBrowser(stack.baseUrl, url).post('', {});
    expect(bare.status).toBe(422);
    expect(await bare.text()).toContain('peça e digite o código');
    expect(await biometricsStatus(customer.id)).toBe('pending');
  });

  it('refuses a form posted without its CSRF token, or with another browser’s (issue 37, finding 10)', async () => {
    const customer = await registerCustomer(api);
    const url = await openSession(customer.id);
    const mine = new HostedBrowser(stack.baseUrl, url);
    const theirs = new HostedBrowser(stack.baseUrl, url);
    await mine.fetch();
    await theirs.fetch();
    expect(mine.csrf).toBeDefined();
    expect(theirs.csrf).not.toBe(mine.csrf);
    const form = (csrf: string | undefined) => ({
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(csrf === undefined ? {} : { csrf }).toString(),
    });
    // A page of another site posting to the link: no token, or one copied from another browser.
    for (const refused of [
      await mine.fetch('/code', form(undefined)),
      await mine.fetch('/code', form(theirs.csrf)),
      await fetch(`${stack.baseUrl}${mine.path}/code`, form(mine.csrf)), // the token without its cookie
    ]) {
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('Formulário expirado');
    }
    expect(
      await stack.database
        .sql`select 1 from verification_codes v join biometric_sessions b on b.id = v.subject_id where b.customer_id = ${customer.id}`,
    ).toHaveLength(0);
    // Its own token: a code is sent.
    expect((await mine.fetch('/code', form(mine.csrf))).status).toBe(200);
  });

  it('accepts the published sandbox code in the sandbox only: production needs the code sent', async () => {
    const customer = await registerCustomer(production);
    const response = await production(`/v3/customers/${customer.id}/biometrics`, {
      method: 'POST',
    });
    const url = ((await response.json()) as { session_url: string }).session_url;
    const local = url.replace(stack.config.publicBaseUrl, stack.baseUrl);
    const asked = new Date(Date.now() - 1000);
    const customerBrowser = new HostedBrowser(stack.baseUrl, local);
    const sent = await customerBrowser.post('/code', {});
    const codeId = /name="code_id" value="([^"]+)"/.exec(await sent.text())![1]!;
    const post = (code: string) => customerBrowser.post('', { code_id: codeId, code });
    const published = await post(SANDBOX_CODE);
    expect(published.status).toBe(422);
    expect(await published.text()).toContain('Código incorreto');
    const status = async () =>
      ((await (await production(`/v3/customers/${customer.id}`)).json()) as CustomerBody).kyc.find(
        (item) => item.type === 'biometrics',
      )?.status;
    expect(await status()).toBe('pending');
    const real = codeIn(await waitForMessage(customer.email, { after: asked }));
    expect((await post(real)).status).toBe(200);
    expect(await status()).toBe('submitted');
  });

  it('shows a replaced link as replaced, and an expired one as expired, changing nothing', async () => {
    const customer = await registerCustomer(api);
    const first = await openSession(customer.id);
    const second = await openSession(customer.id);
    const page = await browser.newPage();

    await page.goto(first);
    expect(await page.locator('h1').textContent()).toBe('Este link foi substituído');
    expect(await page.getByRole('button').count()).toBe(0);

    await page.goto(second);
    await page.getByRole('button', { name: 'Enviar código' }).click();
    await page.getByLabel('Código').fill(SANDBOX_CODE);
    clock.advance(16 * 60_000); // past the 15 minutes, while the page is open
    await page.getByRole('button', { name: 'Concluir captura' }).click();
    await page.waitForSelector('text=Este link expirou');
    expect(await biometricsStatus(customer.id)).toBe('pending');
    await page.close();
  });
});
