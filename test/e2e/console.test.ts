import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/project-root.js';
import { launchChromium } from '../helpers/browser.js';
import { offerOf, type LoanBody } from '../helpers/credit.js';
import { registerCustomer, upload } from '../helpers/customers.js';
import { completeBiometricsCapture, SigningBrowser } from '../helpers/hosted.js';
import {
  createOperator,
  enrollFromMail,
  opsRequest,
  staff,
  type TestOperator,
} from '../helpers/operators.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { endToEndId, notifyPsp } from '../helpers/psp.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

/**
 * The back office in Chromium (contract §18, issue 40): staff sign in with their operator tokens,
 * each in a browser context of their own, and do the day's work through the console's pages —
 * which run the ops API's own commands, so roles, dual control and the audit hold as over the API.
 * axe-core (from node_modules, never a CDN) checks every page visited; CONSOLE_SCREENSHOTS=1 saves
 * the main pages to docs/images/console-*.png.
 */
const axeSource = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);
const screenshots = process.env.CONSOLE_SCREENSHOTS === '1';

let stack: TestStack;
let production: Client;
let browser: Browser;
let reviewer: TestOperator;
let maker: TestOperator;
let checker: TestOperator;
const foreign: string[] = [];
/** axe-core's violations on each page visited: all of them, and the serious or critical ones. */
const accessibility = new Map<string, { violations: number; serious: number; rules: string[] }>();

beforeAll(async () => {
  stack = await startStack();
  const partner = await createPartner(stack);
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  [reviewer, maker, checker] = await Promise.all([
    createOperator(stack, ['kyc_reviewer']),
    createOperator(stack, ['disbursement', 'payments']),
    createOperator(stack, ['disbursement', 'payments']),
  ]);
  browser = await launchChromium();
});
afterAll(async () => {
  // Printed for the record (the closing note cites them): every page, its counts and rules.
  const lines = [...accessibility].map(
    ([page, { violations, serious, rules }]) =>
      `  ${page}: ${violations} violation(s), ${serious} serious or critical${rules.length > 0 ? ` (${rules.join(', ')})` : ''}`,
  );
  if (lines.length > 0)
    process.stdout.write(`axe-core on the console's pages:\n${lines.join('\n')}\n`);
  await browser?.close();
  await stack?.stop();
});

/** A member of staff's own browser context, signed in with their token. */
async function signIn(operator: TestOperator, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('request', (request) => {
    // The browser's own PDF viewer (chrome-extension:, chrome:) is no request to anyone.
    const url = request.url();
    if (!url.startsWith(stack.baseUrl) && !/^chrome(-extension)?:/.test(url)) foreign.push(url);
  });
  await page.goto(`${stack.baseUrl}/ops/console`);
  expect(new URL(page.url()).pathname).toBe('/ops/console/sign-in');
  await check(page, 'sign-in');
  await page.getByLabel('Token de operador').fill(operator.token);
  await page.getByRole('button', { name: 'Entrar' }).click();
  await page.waitForURL(`${stack.baseUrl}/ops/console`);
  await shows(page.locator('.who'), operator.operator.id);
  return { context, page };
}

/** axe-core on the page as it is (its frames aside: a PDF is no HTML); a screenshot if asked. */
async function check(page: Page, name: string, screenshot = false) {
  await page.evaluate(axeSource);
  type Axe = {
    run: (options: object) => Promise<{ violations: { id: string; impact: string }[] }>;
  };
  const result = await page.evaluate(() =>
    (globalThis as unknown as { axe: Axe }).axe.run({
      iframes: false,
      resultTypes: ['violations'],
    }),
  );
  const serious = result.violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  const seen = accessibility.get(name);
  accessibility.set(name, {
    violations: Math.max(seen?.violations ?? 0, result.violations.length),
    serious: Math.max(seen?.serious ?? 0, serious.length),
    rules: [...new Set([...(seen?.rules ?? []), ...result.violations.map((v) => v.id)])],
  });
  expect(
    serious.map((violation) => violation.id),
    `axe-core on ${name}`,
  ).toEqual([]);
  if (screenshot && screenshots)
    await page.screenshot({
      path: join(projectRoot, 'docs/images', `console-${name}.png`),
      fullPage: true,
    });
}

/** Follows a section's link in the console's navigation. */
const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Seções' }).getByRole('link', { name }).click();

/** Waits for an element of `locator` that contains `text` (the page's answer to an action). */
async function shows(locator: Locator, text: string): Promise<void> {
  try {
    await locator.filter({ hasText: text }).first().waitFor({ timeout: 15_000 });
  } catch (error) {
    const page = locator.page();
    const main = await page
      .locator('main')
      .innerText()
      .catch(() => '(no page)');
    throw new Error(`"${text}" not shown at ${page.url()}; the page says:\n${main}`, {
      cause: error,
    });
  }
}

/** The CSRF token of the page's forms (for a POST the page does not offer). */
const csrfOf = async (page: Page) =>
  page.locator('input[name=csrf]').first().getAttribute('value') as Promise<string>;

/** A POST the page does not offer, made with the context's cookies and the page's CSRF token. */
async function postAnyway(page: Page, path: string, form: Record<string, string> = {}) {
  const response = await page.request.post(`${stack.baseUrl}${path}`, {
    form: { csrf: await csrfOf(page), ...form },
    maxRedirects: 0,
  });
  return { status: response.status(), text: await response.text() };
}

/** A one-page PDF saying `text` (the reviewer sees it in the page's frame). */
function pdfSaying(text: string): Buffer {
  const content = `BT /F1 28 Tf 40 300 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 360] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const offset = body.length;
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets
    .map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`)
    .join('')}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A small PNG portrait (a face-coloured oval on blue): the selfie, shown inline as an image. */
function selfiePng(width = 120, height = 160): Buffer {
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) {
      const inside = ((x - 60) / 38) ** 2 + ((y - 70) / 50) ** 2 <= 1;
      row.set(inside ? [224, 172, 140] : [70, 110, 160], 1 + x * 3);
    }
    rows.push(row);
  }
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const tail = Buffer.alloc(4);
    tail.writeUInt32BE(crc(typed));
    return Buffer.concat([head, typed, tail]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A production customer with every KYC item submitted (biometrics on the hosted page). */
async function submittedCustomer() {
  const customer = await registerCustomer(production);
  const files = [
    ['identity_card_front', pdfSaying('RG - frente'), 'rg-frente.pdf'],
    ['identity_card_back', pdfSaying('RG - verso'), 'rg-verso.pdf'],
    ['selfie', selfiePng(), 'selfie.png'],
  ] as const;
  for (const [type, bytes, name] of files)
    expect((await upload(production, customer.id, type, { bytes, name })).status).toBe(201);
  const session = await json<{ session_url: string }>(
    production(`/v3/customers/${customer.id}/biometrics`, { method: 'POST' }),
  );
  const captured = await completeBiometricsCapture(stack.baseUrl, session.session_url, {
    email: customer.email,
  });
  expect(captured.status).toBe(200);
  return customer;
}

describe('the back office, in a real browser', () => {
  let loan: LoanBody;
  let disbursementApproval: string;
  let pixApproval: string;
  let reviewerPage: Page;
  let makerPage: Page;
  let checkerPage: Page;
  const contexts: BrowserContext[] = [];
  afterAll(async () => Promise.all(contexts.map((context) => context.close())));

  it('a reviewer approves a customer’s documents and credit from the KYC queue', async () => {
    const customer = await submittedCustomer();
    const signedIn = await signIn(reviewer);
    contexts.push(signedIn.context);
    reviewerPage = signedIn.page;
    const page = reviewerPage;
    await check(page, 'home');

    await nav(page, 'Fila de KYC');
    await check(page, 'kyc-queue', true);
    await page.getByRole('link', { name: customer.id }).click();
    expect(await page.locator('h1').textContent()).toBe(`Cliente ${customer.name}`);
    // The documents are shown inline, streamed from the object store by the console.
    const frame = page.locator('section[aria-labelledby=item-identity_card_front] iframe');
    const file = await page.request.get(`${stack.baseUrl}${await frame.getAttribute('src')}`);
    expect(file.status()).toBe(200);
    expect(file.headers()['content-type']).toBe('application/pdf');
    expect(file.headers()['content-disposition']).toMatch(/^inline/);
    expect((await file.body()).toString('latin1')).toContain('RG - frente');
    const selfie = page.locator('section[aria-labelledby=item-selfie] img');
    expect(await selfie.getAttribute('alt')).toMatch(/^Selfie/);
    // The image is loaded from the console's own route, and decoded.
    expect(
      await selfie.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
    ).toBe(120);
    // The credit analysis runs in the customer's workflow: its decision waits for it.
    await eventually(async () => {
      await page.reload();
      return (await page.getByRole('button', { name: 'Aprovar crédito' }).count()) > 0 || undefined;
    }, 'the credit decision form');
    await check(page, 'kyc-review', true);

    await page.getByLabel('Limite pré-aprovado (R$)').fill('30.000,00');
    await page.getByRole('button', { name: 'Aprovar crédito' }).click();
    await shows(page.locator('.notice.ok'), 'Crédito aprovado');
    for (const type of ['identity_card_front', 'identity_card_back', 'selfie', 'biometrics']) {
      await page
        .locator(`section[aria-labelledby=item-${type}]`)
        .getByRole('button', { name: 'Aprovar' })
        .click();
      await shows(page.locator('.notice.ok'), 'aprovado');
      // Each action shows its audit line: this operator, this command, its outcome.
      await shows(page.locator('.audit'), reviewer.operator.id);
      await shows(page.locator('.audit'), 'reviewCustomer');
    }
    await shows(page.locator('.notice.ok'), 'Cliente agora ativo');
    const after = await json<{ status: string }>(production(`/v3/customers/${customer.id}`));
    expect(after.status).toBe('active');

    // The customer takes a loan and signs it: it waits for its money (processing).
    const offer = await offerOf(production, customer.id);
    const simulation = await json<{ id: string }>(
      production(`/v3/credit-offers/${offer.id}/simulations`, {
        method: 'POST',
        body: { amount: offer.min_amount, installments: 3 },
      }),
      201,
    );
    loan = await json<LoanBody>(
      production('/v3/loans', {
        method: 'POST',
        body: {
          credit_offer_id: offer.id,
          simulation_id: simulation.id,
          // A bank account: the PSP's payout port cannot pay one, so ops disburse by hand (the
          // exception path of contract §16), under dual control.
          disbursement_account: {
            type: 'bank_account',
            bank_code: '341',
            branch: '0001',
            account_number: '12345-6',
            account_type: 'checking',
          },
        },
      }),
      201,
    );
    const signing = new SigningBrowser(stack.baseUrl, loan.signing_url);
    await signing.identify(loan.signers[0]!.cpf, { email: customer.email });
    expect((await signing.sign()).status).toBe(200);
    await eventually(
      async () =>
        (await json<LoanBody>(production(`/v3/loans/${loan.id}`))).status === 'processing' ||
        undefined,
      'the signed loan processing',
    );
  });

  it('maker and checker approve a disbursement from two sessions; the maker cannot approve their own', async () => {
    const makerSession = await signIn(maker);
    const checkerSession = await signIn(checker);
    contexts.push(makerSession.context, checkerSession.context);
    makerPage = makerSession.page;
    checkerPage = checkerSession.page;

    await nav(makerPage, 'Desembolsos');
    await check(makerPage, 'disbursements', true);
    await makerPage.getByRole('button', { name: `Reivindicar ${loan.id}` }).click();
    await shows(makerPage.locator('.notice.ok'), 'reivindicado');
    await makerPage.getByRole('button', { name: `Confirmar desembolso de ${loan.id}` }).click();
    await shows(makerPage.locator('.notice.ok'), 'aguardando aprovação');
    disbursementApproval = /apr_[0-9a-f]{32}/.exec(
      (await makerPage.locator('.notice.ok').textContent())!,
    )![0];
    // Nothing moved yet.
    expect((await json<LoanBody>(production(`/v3/loans/${loan.id}`))).status).toBe('processing');

    // The maker sees theirs pending, with nothing to press; posting the approval anyway is refused.
    await nav(makerPage, 'Aprovações');
    const mine = makerPage.locator('tr', { hasText: disbursementApproval });
    await shows(mine, 'sua: aguarda outro operador');
    expect(await mine.getByRole('button').count()).toBe(0);
    const own = await postAnyway(
      makerPage,
      `/ops/console/approvals/${disbursementApproval}/approve`,
    );
    expect(own.status).toBe(403);
    expect(own.text).toContain('approval_by_maker');

    // The checker, in another session, approves it: the loan is active.
    await nav(checkerPage, 'Aprovações');
    await check(checkerPage, 'approvals', true);
    await checkerPage.getByRole('button', { name: `Aprovar ${disbursementApproval}` }).click();
    await shows(checkerPage.locator('.notice.ok'), 'aprovada');
    await shows(checkerPage.locator('.audit'), 'approveApproval');
    expect((await json<LoanBody>(production(`/v3/loans/${loan.id}`))).status).toBe('active');

    await checkerPage.goto(`${stack.baseUrl}/ops/console/loans/${loan.id}`);
    expect(await checkerPage.locator('h1').textContent()).toBe(`Empréstimo ${loan.id}`);
    await shows(
      checkerPage.getByRole('table', { name: 'Transações e lançamentos' }),
      'disbursement',
    );
    await check(checkerPage, 'loan', true);
  });

  it('an operator without the role sees no action, and is refused if they post it anyway', async () => {
    await nav(reviewerPage, 'Desembolsos');
    expect(await reviewerPage.getByRole('button', { name: /Confirmar desembolso/ }).count()).toBe(
      0,
    );
    const refused = await postAnyway(reviewerPage, `/ops/console/disbursements/${loan.id}/confirm`);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('operator_role_required');
    // Nor may they read the audit (administrators only), nor post without the form's token.
    await reviewerPage.goto(`${stack.baseUrl}/ops/console/audit`);
    expect(await reviewerPage.locator('h1').textContent()).toBe('Acesso negado');
    const forged = await reviewerPage.request.post(
      `${stack.baseUrl}/ops/console/disbursements/${loan.id}/claim`,
      { form: { csrf: 'k1.forged' }, maxRedirects: 0 },
    );
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain('Formulário expirado');
  });

  it('an unmatched Pix is matched to a loan, under dual control', async () => {
    const e2e = endToEndId();
    const body = JSON.stringify({
      pix: [
        {
          endToEndId: e2e,
          txid: 'CONSOLE0UNKNOWN000000000000',
          valor: '25.00',
          horario: new Date().toISOString(),
        },
      ],
    });
    expect((await notifyPsp(stack.baseUrl, body)).status).toBe(200);

    await nav(checkerPage, 'Pix não identificados');
    await check(checkerPage, 'unmatched-pix', true);
    await checkerPage.locator(`#loan-${e2e}`).fill(loan.id);
    await checkerPage.getByRole('button', { name: `Vincular Pix ${e2e}` }).click();
    await shows(checkerPage.locator('.notice.ok'), 'aguardando aprovação');
    pixApproval = /apr_[0-9a-f]{32}/.exec(
      (await checkerPage.locator('.notice.ok').textContent())!,
    )![0];

    await nav(makerPage, 'Aprovações');
    await makerPage.getByRole('button', { name: `Aprovar ${pixApproval}` }).click();
    await shows(makerPage.locator('.notice.ok'), 'aprovada');
    await eventually(async () => {
      const pix = await fetch(`${stack.baseUrl}/ops/v1/received-pix/${e2e}`, {
        headers: { authorization: `Bearer ${checker.token}` },
      });
      const read = (await pix.json()) as { status: string; loan_id: string | null };
      return (read.status === 'recorded' && read.loan_id === loan.id) || undefined;
    }, 'the Pix booked on the loan');
  });

  it('the audit page shows each of those with its actor; a deactivated operator’s session ends', async () => {
    const admin = staff().admins[0];
    const { context, page } = await signIn(admin);
    contexts.push(context);
    await nav(page, 'Auditoria');
    await check(page, 'audit');
    // The trail of the whole run is long: its picture shows the checker's.
    await page.goto(`${stack.baseUrl}/ops/console/audit?actor_id=${checker.operator.id}`);
    await check(page, 'audit', true);
    const rowOf = async (actor: TestOperator, operation: string, outcome: string) => {
      await page.goto(
        `${stack.baseUrl}/ops/console/audit?actor_id=${actor.operator.id}&operation_id=${operation}`,
      );
      await shows(page.locator('tbody tr').first(), actor.operator.id);
      await shows(page.locator('tbody'), outcome);
    };
    await rowOf(reviewer, 'reviewCustomer', '200');
    await rowOf(reviewer, 'decideCustomerCredit', '200');
    await rowOf(maker, 'claimLoanDisbursement', '200');
    await rowOf(maker, 'reportLoanDisbursement', '202');
    await rowOf(maker, 'approveApproval', 'approval_by_maker');
    await rowOf(checker, 'approveApproval', disbursementApproval);
    await rowOf(reviewer, 'reportLoanDisbursement', 'operator_role_required');
    await rowOf(checker, 'matchUnmatchedPix', pixApproval);
    await rowOf(maker, 'approveApproval', pixApproval);
    // The day's filter: today's entries only.
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(
      new Date(),
    );
    await page.goto(
      `${stack.baseUrl}/ops/console/audit?actor_id=${checker.operator.id}&from=${today}&to=${today}`,
    );
    await shows(page.locator('tbody'), 'matchUnmatchedPix');
    await page.goto(
      `${stack.baseUrl}/ops/console/audit?actor_id=${checker.operator.id}&to=2020-01-01`,
    );
    await shows(page.locator('main'), 'Nada registrado com esses filtros');

    // A console session lasts only as long as its operator: deactivated, the next page is sign-in.
    const deactivated = await opsRequest(
      stack,
      admin.token,
      `/operators/${reviewer.operator.id}/deactivation`,
    );
    expect(deactivated.status).toBe(200);
    await reviewerPage.goto(`${stack.baseUrl}/ops/console/kyc`);
    expect(new URL(reviewerPage.url()).pathname).toBe('/ops/console/sign-in');

    // The console's answers: its policy allows nothing from another origin, its cookie is the
    // browser's alone; and no page asked another origin for anything.
    const answer = await page.request.get(`${stack.baseUrl}/ops/console/approvals`);
    expect(answer.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(answer.headers()['x-content-type-options']).toBe('nosniff');
    expect(answer.headers()['referrer-policy']).toBe('no-referrer');
    const session = (await context.cookies()).find(
      (cookie) => cookie.name === 'ops_console_session',
    );
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/ops/console' });
    expect(foreign).toEqual([]);
  });

  it('a customer’s page, the loan’s events and devoluções, the trial balance, and a reconciliation rerun', async () => {
    const page = checkerPage;
    await page.goto(`${stack.baseUrl}/ops/console/loans/${loan.id}`);
    await page.getByRole('link', { name: loan.customer_id }).click();
    expect(await page.locator('h1').textContent()).toBe(`Cliente ${loan.customer_id}`);
    // Identity masked as the service masks it outside the KYC review: no full cpf on this page.
    const cpf = loan.signers[0]!.cpf;
    await shows(page.locator('dl.facts'), `***.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-**`);
    expect(await page.locator('main').innerText()).not.toContain(cpf);
    await shows(page.getByRole('table', { name: 'Ofertas, mais recentes primeiro' }), 'co_');
    await shows(page.locator('dl.facts'), `customer-onboarding/${loan.customer_id}`);
    await check(page, 'customer', true);

    await page.getByRole('link', { name: loan.id }).click();
    await shows(page.getByRole('table', { name: /^Eventos do empréstimo/ }), 'loan.active');
    await shows(page.locator('main'), 'Nenhuma devolução.');
    // Nothing due back: no devolução to ask for.
    expect(await page.getByRole('button', { name: 'Pedir devolução' }).count()).toBe(0);
    await check(page, 'loan', true);

    await nav(page, 'Devoluções');
    await check(page, 'devolucoes', true);

    await nav(page, 'Balancete');
    await shows(page.getByRole('table', { name: 'Balancete de produção' }), 'loan_principal');
    await shows(page.getByRole('table', { name: 'Balancete de produção' }), 'Total');
    expect(await page.locator('.notice.error').count()).toBe(0);
    await check(page, 'trial-balance', true);

    // A day no other file reconciles (its PSP side is empty for every account): run it again.
    await nav(page, 'Conciliação');
    await page.getByLabel('Dia (São Paulo)').fill('2021-03-01');
    await page.getByRole('button', { name: 'Ver' }).click();
    await page.getByRole('button', { name: /^Rodar/ }).click();
    await shows(page.locator('.notice.ok'), 'Conciliação de 2021-03-01 na fila');
    await shows(page.locator('.audit'), 'runReconciliation');
    await eventually(async () => {
      await page.goto(`${stack.baseUrl}/ops/console/reconciliation?date=2021-03-01`);
      return (
        (await page.locator('main').innerText()).includes('conferido, sem divergências') ||
        undefined
      );
    }, 'the rerun report');
    await shows(page.locator('main'), 'Nenhuma divergência.');
    await check(page, 'reconciliation', true);
  });

  it('an administrator asks for an operator and another approves it from a second session', async () => {
    const [first, second] = staff().admins;
    const asking = await signIn(first);
    const approving = await signIn(second);
    contexts.push(asking.context, approving.context);
    const page = asking.page;
    await nav(page, 'Operadores');
    await check(page, 'operators', true);
    const email = `console-${Date.now().toString(36)}@example.com`;
    await page.getByLabel('Nome').fill('Operadora do Console');
    await page.getByLabel('E-mail (recebe o código de cadastro)').fill(email);
    await page.locator('#new-kyc_reviewer').check();
    await page.getByRole('button', { name: 'Pedir operador' }).click();
    await shows(page.locator('.notice.ok'), 'aguardando aprovação de outro administrador');
    await shows(page.locator('.audit'), 'createOperator');
    const approval = /apr_[0-9a-f]{32}/.exec((await page.locator('.notice.ok').textContent())!)![0];

    await approving.page.goto(`${stack.baseUrl}/ops/console/approvals?limit=100`);
    await approving.page.getByRole('button', { name: `Aprovar ${approval}` }).click();
    await shows(approving.page.locator('.notice.ok'), 'aprovada');

    await nav(page, 'Operadores');
    await page
      .getByRole('row', { name: /Operadora do Console/ })
      .getByRole('link')
      .first()
      .click();
    await shows(page.locator('dl.facts'), email);
    await shows(page.locator('dl.facts'), 'análise de KYC');
    await check(page, 'operator');

    // The new operator redeems the mailed code, signs in, and rotates their own token from their
    // page: the new token is shown once, and the session (which named the old one) ends.
    const enrolled = await enrollFromMail(stack, email);
    const own = await signIn(enrolled);
    contexts.push(own.context);
    await own.page.locator('.who').getByRole('link', { name: enrolled.operator.id }).click();
    await own.page.getByRole('button', { name: 'Trocar meu token' }).click();
    await shows(own.page.locator('.notice.ok'), 'Seu novo token');
    await shows(own.page.locator('.audit'), 'rotateOperatorToken');
    const rotated = await own.page.locator('code.token').textContent();
    expect(rotated).toMatch(/^opk_/);
    expect(rotated).not.toBe(enrolled.token);
    await own.page.goto(`${stack.baseUrl}/ops/console/kyc`);
    expect(new URL(own.page.url()).pathname).toBe('/ops/console/sign-in');
    contexts.push((await signIn({ ...enrolled, token: rotated! })).context);

    // An administrator has no payments role: the rerun is refused with a 403 page, nothing run.
    const refused = await postAnyway(page, '/ops/console/reconciliation/2021-03-01/run');
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('operator_role_required');

    // Erasure: the customer's loan is in force, so the erasure is refused, audited, nothing erased.
    await page.goto(`${stack.baseUrl}/ops/console/customers/${loan.customer_id}`);
    await page.getByRole('button', { name: 'Apagar dados pessoais' }).click();
    await shows(page.locator('.notice.error'), 'invalid_state');
    await shows(page.locator('.audit'), 'eraseCustomer');
    await shows(page.locator('main'), 'Nenhum pedido de apagamento.');
    await nav(page, 'Apagamentos');
    await check(page, 'erasures', true);
  });

  it('fits a tablet', async () => {
    const { context, page } = await signIn(checker, { width: 820, height: 1180 });
    contexts.push(context);
    await nav(page, 'Aprovações');
    const overflow = await page.evaluate(() => {
      const root = (
        globalThis as unknown as {
          document: { documentElement: { scrollWidth: number; clientWidth: number } };
        }
      ).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await check(page, 'tablet-approvals', true);
  });
});
