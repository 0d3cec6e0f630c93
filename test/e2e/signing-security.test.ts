import { createHmac, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { loanSigners, loans, verificationCodes } from '../../src/db/schema/index.js';
import { hashSigningToken } from '../../src/domain/loans/signing-token.js';
import { maskEmail, maskTaxId } from '../../src/domain/masking.js';
import type { loanSchema } from '../../src/http/routes/loans/schema.js';
import { activeCustomer, offerOf } from '../helpers/credit.js';
import { fakeCnpj, fakeCpf, type CustomerBody } from '../helpers/customers.js';
import { SANDBOX_CODE, SigningBrowser } from '../helpers/hosted.js';
import { codeIn, waitForMessage } from '../helpers/mailbox.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { startStack, TestClock, type TestStack } from '../helpers/stack.js';

type LoanBody = z.infer<typeof loanSchema>;

let stack: TestStack;
let api: Client;
let credential: Awaited<ReturnType<typeof createPartner>>['credentials']['sandbox'];
const clock = new TestClock();

beforeAll(async () => {
  stack = await startStack({
    clock,
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '1h' },
  });
  credential = (await createPartner(stack)).credentials.sandbox;
  api = client(stack, await tokenFor(stack, credential));
});
afterAll(async () => {
  await stack?.stop();
});

interface SignedLoan {
  loan: LoanBody;
  customer: CustomerBody;
  guarantor: { name: string; cpf: string; email: string };
}

/** A sandbox loan awaiting two signatures: the customer's and a guarantor's. */
async function loanWithGuarantor(
  customerFields: Record<string, unknown> = {},
): Promise<SignedLoan> {
  const customer = await activeCustomer(stack, api, customerFields);
  const offer = await offerOf(api, customer.id);
  const simulation = (await (
    await api(`/v3/credit-offers/${offer.id}/simulations`, {
      method: 'POST',
      body: { amount: offer.min_amount, installments: 3 },
    })
  ).json()) as { id: string };
  const guarantor = {
    name: 'João Fiador',
    cpf: fakeCpf(),
    email: `joao.${randomUUID().slice(0, 8)}@example.com`,
  };
  const response = await api('/v3/loans', {
    method: 'POST',
    body: {
      credit_offer_id: offer.id,
      simulation_id: simulation.id,
      disbursement_account: { type: 'pix', pix_key: customer.email },
      signers: [guarantor],
    },
  });
  expect(response.status).toBe(201);
  return { loan: (await response.json()) as LoanBody, customer, guarantor };
}

const loanOf = async (id: string) => (await (await api(`/v3/loans/${id}`)).json()) as LoanBody;

const signerRows = (loanId: string) =>
  stack.database.db.select().from(loanSigners).where(eq(loanSigners.loanId, loanId));

/** A code of six digits that is neither the sandbox's nor `real`. */
const wrongCode = (real: string, n: number) => {
  const guess = String(111111 * ((n % 8) + 1));
  return guess === real ? '999999' : guess;
};

describe('the signing link alone signs nothing (issue 26, finding 1)', () => {
  it('refuses the forgery: the link, the PDF, a co-signer’s cpf, no code', async () => {
    const { loan, customer, guarantor } = await loanWithGuarantor();
    const attacker = new SigningBrowser(stack.baseUrl, loan.signing_url, 'attacker');

    // The page and everything the link alone reaches show no cpf, not even masked (a mask leaves
    // about a thousand candidates, and the code form tells a signer's cpf from another), no name
    // and no contract.
    const page = await attacker.fetch();
    expect(page.status).toBe(200);
    const html = await page.text();
    for (const cpf of [customer.cpf, guarantor.cpf]) {
      expect(html).not.toContain(cpf.slice(3, 9));
      expect(html).not.toContain(maskTaxId(cpf));
    }
    for (const shown of ['Valor liberado', customer.name, guarantor.name])
      expect(html).not.toContain(shown);
    expect(html).toContain('Assinaturas: 0 de 2');
    const pdf = await attacker.fetch('/contract');
    expect(pdf.status).toBe(403);
    expect(pdf.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await pdf.text()).not.toContain(guarantor.cpf);

    // The page's old form (a typed cpf and consent) signs nothing, nor does an empty POST.
    const typed = await attacker.post('', { cpf: guarantor.cpf, agree: 'yes' });
    expect(typed.status).toBe(403);
    expect(await typed.text()).toContain('identifique-se com o código');
    expect((await attacker.post('', {})).status).toBe(403);
    // A code id of nobody's, or a guess at one, opens nothing.
    expect((await attacker.verify(`vc_${'0'.repeat(32)}`, '123456')).status).toBe(422);

    // Asking for the guarantor's code sends it to the guarantor, not to whoever asked.
    const asked = new Date(Date.now() - 1000);
    const { response, html: codeHtml, codeId } = await attacker.requestCode(guarantor.cpf);
    expect(response.status).toBe(200);
    // The page does not say where it went (issue 37: not even masked; a non-signer gets the same).
    expect(codeHtml).not.toContain(maskEmail(guarantor.email));
    expect(codeHtml).not.toContain(guarantor.email);
    const mail = await waitForMessage(guarantor.email, { after: asked });
    const real = codeIn(mail);
    expect(mail.subject).not.toContain(real); // a subject shows on a locked phone

    // A typo that cannot be a code is said so and spends no try.
    const typo = await attacker.verify(codeId!, '12ab');
    expect(typo.status).toBe(422);
    expect(await typo.text()).toContain('O código tem 6 dígitos');

    // Five wrong guesses spend the code: the right one after them opens nothing.
    for (let attempt = 1; attempt <= 5; attempt++) {
      const guessed = await attacker.verify(codeId!, wrongCode(real, attempt));
      expect(guessed.status).toBe(422);
      expect(guessed.headers.get('set-cookie')).toBeNull();
    }
    expect((await attacker.verify(codeId!, real)).status).toBe(422);
    expect((await attacker.sign()).status).toBe(403);

    const after = await loanOf(loan.id);
    expect(after).toMatchObject({ status: 'awaiting_signatures', signatures_received: 0 });
    expect((await signerRows(loan.id)).every((s) => s.signedAt === null)).toBe(true);
  });

  it('signs as the verified signer only, recording time, address, agent, hash and channel; a forged X-Forwarded-For changes nothing', async () => {
    const { loan, customer, guarantor } = await loanWithGuarantor();
    const browser = new SigningBrowser(stack.baseUrl, loan.signing_url, 'Mozilla/5.0 (Guarantor)');
    await browser.identify(guarantor.cpf, { email: guarantor.email });

    // With the session: the contract, and a form that signs as the guarantor and no one else.
    const page = await (await browser.fetch()).text();
    expect(page).toContain(loan.contract_sha256);
    expect(page).toContain(`Assinar como ${guarantor.name}`);
    expect(page).not.toContain(customer.cpf);
    // How the borrower will pay (issue 23): the first due date, the Pix charge of each row, and
    // — the customer has no cnpj — the withdrawal right.
    const firstDue = loan.first_due_date.split('-').reverse().join('/');
    expect(page).toContain(`<th>Primeiro vencimento</th><td class="n">${firstDue}</td>`);
    expect(page).toContain('<h2>Como pagar</h2>');
    expect(page).toContain(
      `Cada parcela é paga por Pix. Antes de cada vencimento (o primeiro em ${firstDue})`,
    );
    expect(page).toContain('QR code ou “Pix copia e cola”');
    expect(page).toContain('A cobrança vale até o fim desse dia');
    expect(page).toContain('O pagamento é reconhecido sozinho');
    expect(page).toContain('Direito de arrependimento');
    expect(page).toContain('até o fim do 7º dia depois da liberação');
    expect(page).toContain('art. 49');
    const pdf = await browser.fetch('/contract');
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toMatch(/^attachment; filename="ccb-ln_/);

    // Signed with a forged X-Forwarded-For: the address recorded is the socket's.
    const signed = await browser.fetch('', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Forwarded-For': '203.0.113.7',
      },
      body: new URLSearchParams({ agree: 'yes', csrf: browser.csrf! }).toString(),
    });
    expect(signed.status).toBe(200);
    expect(await signed.text()).toContain('Assinatura registrada');
    const again = await browser.sign();
    expect(await again.text()).toContain('Você já tinha assinado este contrato; nada mudou.');
    const rows = await signerRows(loan.id);
    const [own, theirs] = [
      rows.find((s) => s.cpf === customer.cpf)!,
      rows.find((s) => s.cpf === guarantor.cpf)!,
    ];
    expect(own.signedAt).toBeNull();
    expect(theirs).toMatchObject({
      userAgent: 'Mozilla/5.0 (Guarantor)',
      signedSha256: loan.contract_sha256,
      signedChannel: `email:${maskEmail(guarantor.email)}`,
    });
    expect(theirs.ipAddress).toMatch(/^(::ffff:)?127\.0\.0\.1$/);

    // A verification under a forged X-Forwarded-For records the socket's address, not the header's.
    const other = new SigningBrowser(stack.baseUrl, loan.signing_url);
    const { codeId } = await other.requestCode(customer.cpf);
    await other.fetch('/verify', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Forwarded-For': '203.0.113.7',
      },
      body: new URLSearchParams({ code_id: codeId!, code: '000000', csrf: other.csrf! }).toString(),
    });
    const verification = await stack.database.db.query.verificationCodes.findFirst({
      where: eq(verificationCodes.id, codeId!),
    });
    expect(verification?.verifiedIp).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(await loanOf(loan.id)).toMatchObject({ signatures_received: 1 });
  });

  it('tells a company customer how to pay, and of no withdrawal right (CDC art. 49 is a consumer’s)', async () => {
    const { loan, customer } = await loanWithGuarantor({ cnpj: fakeCnpj() });
    expect(customer.cnpj).not.toBeNull();
    const browser = new SigningBrowser(stack.baseUrl, loan.signing_url);
    await browser.identify(customer.cpf, { sandbox: true });
    const page = await (await browser.fetch()).text();
    expect(page).toContain('<h2>Como pagar</h2>');
    expect(page).toContain(`(o primeiro em ${loan.first_due_date.split('-').reverse().join('/')})`);
    expect(page).not.toContain('Direito de arrependimento');
    expect(page).not.toContain('art. 49');
  });

  it('codes last ten minutes and come three an hour per signer and address', async () => {
    const { loan, customer } = await loanWithGuarantor();
    const browser = new SigningBrowser(stack.baseUrl, loan.signing_url);
    const asked = new Date(Date.now() - 1000);
    const first = await browser.requestCode(customer.cpf);
    const code = codeIn(await waitForMessage(customer.email, { after: asked }));
    clock.advance(11 * 60_000);
    expect((await browser.verify(first.codeId!, code)).status).toBe(422); // expired
    expect((await browser.requestCode(customer.cpf)).response.status).toBe(200);
    expect((await browser.requestCode(customer.cpf)).response.status).toBe(200);
    const fourth = await browser.requestCode(customer.cpf);
    expect(fourth.response.status).toBe(429);
    expect(Number(fourth.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(fourth.codeId).toBeUndefined();
  });

  it('answers 410 with a page once the loan leaves awaiting_signatures', async () => {
    const { loan, customer, guarantor } = await loanWithGuarantor();
    const browser = new SigningBrowser(stack.baseUrl, loan.signing_url);
    await browser.identify(customer.cpf, { sandbox: true });
    expect((await api(`/v3/loans/${loan.id}/cancel`, { method: 'POST', body: {} })).status).toBe(
      200,
    );
    const answers = [
      await browser.fetch(),
      await browser.fetch('/contract'),
      await browser.sign(),
      (await browser.requestCode(guarantor.cpf)).response,
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(410);
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    }
    expect(await answers[0]!.text()).toContain('Este link não está mais ativo');
  });
});

describe('the signing page against anyone holding its link (issue 37, findings 8 and 10)', () => {
  /** A browser at another host, as the API sees it (the loopback's 127.0.0.x). */
  const elsewhere = (loan: LoanBody, n: number) =>
    new SigningBrowser(stack.baseUrl, loan.signing_url, `elsewhere-${n}`, `127.0.0.${n}`);

  it('throttles a link per address, on the decoded token: hammering it from elsewhere locks out nobody', async () => {
    const { loan } = await loanWithGuarantor();
    const attacker = elsewhere(loan, 2);
    // Half the requests with a character of the token percent-encoded: the same link, one bucket.
    const encoded = attacker.path.replace(/l/, '%6C');
    expect(encoded).not.toBe(attacker.path);
    const byEncoded = new SigningBrowser(
      stack.baseUrl,
      `${stack.baseUrl}${encoded}`,
      'x',
      '127.0.0.2',
    );
    // Requests until the link's bucket at that address is dry: about 30, both spellings counted
    // together (each alone would get 30).
    let sent = 0;
    let last: Response | undefined;
    while (sent < 60) {
      last = await (sent % 2 ? attacker : byEncoded).fetch();
      sent++;
      if (last.status !== 200) break;
    }
    expect(last!.status).toBe(429);
    expect(await last!.text()).toContain('Muitas tentativas');
    expect(sent).toBeGreaterThan(30);
    expect(sent).toBeLessThan(45);
    expect((await attacker.fetch()).status).toBe(429);
    expect((await byEncoded.fetch()).status).toBe(429);
    // The signers, elsewhere, are not locked out.
    expect((await new SigningBrowser(stack.baseUrl, loan.signing_url).fetch()).status).toBe(200);
    expect((await elsewhere(loan, 3).fetch()).status).toBe(200);
  });

  it('lets code requests from other addresses delay a signer by seconds, never lock them out for an hour', async () => {
    const { loan, customer } = await loanWithGuarantor();
    const attacker = elsewhere(loan, 4);
    for (let i = 0; i < 3; i++)
      expect((await attacker.requestCode(customer.cpf)).response.status).toBe(200);
    // The attacker's own address is spent for the hour.
    const more = await attacker.requestCode(customer.cpf);
    expect(more.response.status).toBe(429);
    expect(Number(more.response.headers.get('retry-after'))).toBeGreaterThan(3000);
    // The signer, at home: a short wait, then a code.
    const signer = new SigningBrowser(stack.baseUrl, loan.signing_url);
    const waiting = await signer.requestCode(customer.cpf);
    expect(waiting.response.status).toBe(429);
    expect(Number(waiting.response.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    expect(waiting.html).toContain('Tente de novo em');
    clock.advance(31_000);
    const sent = await signer.requestCode(customer.cpf);
    expect(sent.response.status).toBe(200);
    // A real code, the signer's (the sandbox's published code opens it; no decoy's).
    expect((await signer.verify(sent.codeId!, SANDBOX_CODE)).status).toBe(303);
    // Each further code waits longer (60 s after that one), from any other address too.
    const third = await elsewhere(loan, 5).requestCode(customer.cpf);
    expect(third.response.status).toBe(429);
    const wait = Number(third.response.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(30);
    expect(wait).toBeLessThanOrEqual(60);
  });

  it('answers a cpf that does not sign as it answers a signer’s: the page, the code form, the limits', async () => {
    const { loan, customer, guarantor } = await loanWithGuarantor();
    const normalized = (html: string) =>
      html
        .replace(/name="code_id" value="[^"]+"/g, 'name="code_id" value="…"')
        .replace(/name="csrf" value="[^"]+"/g, 'name="csrf" value="…"');
    // A signer, a signer who has signed, and a cpf that signs nothing: one answer.
    expect(
      (
        await api(`/v3/sandbox/loans/${loan.id}/signatures`, {
          method: 'POST',
          body: { cpf: guarantor.cpf },
        })
      ).status,
    ).toBe(200);
    const answers = [];
    for (const [n, cpf] of [customer.cpf, guarantor.cpf, fakeCpf()].entries()) {
      const browser = elsewhere(loan, 10 + n);
      const first = await browser.requestCode(cpf);
      expect(first.response.status).toBe(200);
      expect(first.codeId).toMatch(/^vc_[0-9a-f]{32}$/);
      // A wrong code: the same refusal, the same tries left.
      const wrong = await browser.verify(first.codeId!, '123450');
      answers.push({
        page: normalized(first.html),
        wrong: [wrong.status, normalized(await wrong.text())],
        // Two more, then the same 429.
        limits: [
          (await browser.requestCode(cpf)).response.status,
          (await browser.requestCode(cpf)).response.status,
          (await browser.requestCode(cpf)).response.status,
        ],
      });
    }
    expect(answers[0]!.wrong[0]).toBe(422);
    expect(answers[0]!.wrong[1]).toContain('Código incorreto. Restam 4 tentativas.');
    expect(answers[0]!.limits).toEqual([200, 200, 429]);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    // A text that is no cpf at all is said so, whoever signs.
    const typo = await elsewhere(loan, 20).requestCode('123');
    expect(typo.response.status).toBe(422);
    expect(typo.html).toContain('Este não é um CPF válido');
    // The rows keep no cpf typed by someone who does not sign.
    const decoys = await stack.database.sql<{ person: string }[]>`
      select distinct person from verification_codes where subject_id = ${loan.id} and decoy`;
    expect(decoys.map((row) => row.person)).toEqual([
      expect.stringMatching(/^decoy:[0-9a-f]{64}$/) as string,
    ]);
  });

  it('refuses a form posted without its CSRF token, or with another browser’s, changing nothing', async () => {
    const { loan, customer } = await loanWithGuarantor();
    const mine = new SigningBrowser(stack.baseUrl, loan.signing_url);
    const theirs = new SigningBrowser(stack.baseUrl, loan.signing_url);
    await mine.fetch();
    await theirs.fetch();
    const post = (browser: SigningBrowser, suffix: string, fields: Record<string, string>) =>
      browser.fetch(suffix, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
    const before = await stack.database
      .sql`select id from verification_codes where subject_id = ${loan.id}`;
    for (const refused of [
      await post(mine, '/code', { cpf: customer.cpf }),
      await post(mine, '/code', { cpf: customer.cpf, csrf: theirs.csrf! }),
      await post(mine, '/verify', { code_id: 'vc_x', code: '000000', csrf: theirs.csrf! }),
      await post(mine, '', { agree: 'yes', csrf: `${mine.csrf!}x` }),
    ]) {
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('Formulário expirado');
    }
    expect(
      await stack.database.sql`select id from verification_codes where subject_id = ${loan.id}`,
    ).toEqual(before);
    // Its own token goes through.
    expect((await post(mine, '/code', { cpf: customer.cpf, csrf: mine.csrf! })).status).toBe(200);
  });
});

describe('signing link keys rotate (SIGNING_LINK_KEYS)', () => {
  it('keeps links of a key still configured working, issues links under the new key, ends links of a dropped key, and still opens links made before key ids', async () => {
    const { loan } = await loanWithGuarantor();
    const oldLink = new URL(loan.signing_url).pathname;
    expect(oldLink).toContain(`${loan.id}.dev.`);
    const development = 'dev:development-signing-link-key-not-for-production';
    const fresh = 'k2:rotated-signing-link-key-0123456789abcdef';
    const rotated = await startStack({
      worker: false,
      taskQueue: stack.config.temporal.taskQueue,
      env: { SIGNING_LINK_KEYS: `${fresh},${development}` },
    });
    const dropped = await startStack({ worker: false, env: { SIGNING_LINK_KEYS: fresh } });
    try {
      const rotatedApi = client(rotated, await tokenFor(rotated, credential));
      expect((await fetch(`${rotated.baseUrl}${oldLink}`)).status).toBe(200);
      const reissued = (await (await rotatedApi(`/v3/loans/${loan.id}`)).json()) as LoanBody;
      const newLink = new URL(reissued.signing_url).pathname;
      expect(newLink).toContain(`${loan.id}.k2.`);
      expect((await fetch(`${rotated.baseUrl}${newLink}`)).status).toBe(200);
      expect((await fetch(`${dropped.baseUrl}${newLink}`)).status).toBe(200);
      expect((await fetch(`${dropped.baseUrl}${oldLink}`)).status).toBe(404);
      // A link issued before key ids (an HMAC alone, found by its stored hash) still opens.
      const legacy = createHmac('sha256', 'development-data-encryption-key-not-for-production')
        .update(`loan-signing:${loan.id}`)
        .digest('base64url');
      await stack.database.db
        .update(loans)
        .set({ signingTokenHash: hashSigningToken(legacy) })
        .where(eq(loans.id, loan.id));
      expect((await fetch(`${dropped.baseUrl}/hosted/signing/${legacy}`)).status).toBe(200);
      // A link whose HMAC was tampered with opens nothing anywhere.
      expect((await fetch(`${rotated.baseUrl}${oldLink.slice(0, -2)}AA`)).status).toBe(404);
    } finally {
      await rotated.stop();
      await dropped.stop();
    }
  });
});
