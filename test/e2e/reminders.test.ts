import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addDays } from '../../src/domain/business-date.js';
import { formatBrl } from '../../src/domain/money.js';
import { workflowIds } from '../../src/temporal/workflow-ids.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { recordHistory } from '../helpers/histories.js';
import { HostedBrowser } from '../helpers/hosted.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { advanceSandboxClock } from '../helpers/sandbox-clock.js';

interface ReminderEvent {
  id: string;
  type: 'installment.reminder';
  data: {
    loan_id: string;
    offset_days: number;
    channels: string[];
    installment: { number: number; due_date: string; amount_due: number };
    charge: { id: string; br_code: string } | null;
  };
}

let stack: TestStack;
let api: Client;
let partnerId: string;

/* Contract §17 over HTTP, on the sandbox clock: delays long, so nothing happens unless it moves. */
beforeAll(async () => {
  stack = await startStack({
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '1h' },
  });
  const partner = await createPartner(stack);
  api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
  partnerId = partner.partner_id;
});
afterAll(async () => {
  await stack?.stop();
});

/** Noon in São Paulo on `date` (after the day's 09:00 reminders). */
const noonOf = (date: string) => new Date(`${date}T12:00:00-03:00`);

/** The customer's sandbox clock to `to`, everything it moves caught up. */
const advance = (customerId: string, to: Date) => advanceSandboxClock(api, customerId, to);

/** Every reminder e-mail Mailpit holds for `to`, oldest first (subject and text). */
async function mailTo(to: string): Promise<{ subject: string; text: string }[]> {
  const mailpit = inject('mailpitApiUrl');
  const query = new URLSearchParams({ query: `to:"${to}"`, limit: '50' });
  const found = (await (await fetch(`${mailpit}/search?${query.toString()}`)).json()) as {
    messages: { ID: string }[];
  };
  const messages = [];
  for (const { ID } of found.messages.reverse()) {
    const detail = (await (await fetch(`${mailpit}/message/${ID}`)).json()) as {
      Subject: string;
      Text: string;
    };
    if (detail.Subject.startsWith('Lembrete'))
      messages.push({ subject: detail.Subject, text: detail.Text.replace(/\r\n/g, '\n') });
  }
  return messages;
}

async function remindersOf(loanId: string): Promise<ReminderEvent[]> {
  const page = (await (
    await api('/v3/events?type=installment.reminder&order=asc&limit=100')
  ).json()) as { data: ReminderEvent[] };
  return page.data.filter((event) => event.data.loan_id === loanId);
}

const loanOf = async (id: string) => (await (await api(`/v3/loans/${id}`)).json()) as LoanBody;

describe('the collections schedule (contract §17)', () => {
  it('is none until set, refuses a bad schedule with every field named, and stores steps in order', async () => {
    expect(await (await api('/v3/collections/schedule')).json()).toEqual({
      steps: [],
      updated_at: null,
    });
    const refused = await api('/v3/collections/schedule', {
      method: 'PUT',
      body: {
        steps: [
          { offset_days: -11, channels: ['email'] },
          { offset_days: 5, channels: ['sms'] },
          { offset_days: 91, channels: ['webhook'] },
        ],
      },
    });
    expect(refused.status).toBe(422);
    const problem = (await refused.json()) as { code: string; errors: { path: string }[] };
    expect(problem.code).toBe('validation_error');
    expect(problem.errors.map((error) => error.path).sort()).toEqual([
      'body.steps.0.offset_days',
      'body.steps.1.channels.0',
      'body.steps.2.offset_days',
    ]);
    const duplicate = await api('/v3/collections/schedule', {
      method: 'PUT',
      body: {
        steps: [
          { offset_days: 1, channels: ['email'] },
          { offset_days: 1, channels: ['webhook', 'webhook'] },
        ],
      },
    });
    expect(duplicate.status).toBe(422);
    expect(
      ((await duplicate.json()) as { errors: { code: string }[] }).errors.map((e) => e.code),
    ).toEqual(['duplicate_offset', 'duplicate_channel']);
    // Nothing was stored by the refusals.
    expect(((await (await api('/v3/collections/schedule')).json()) as { steps: [] }).steps).toEqual(
      [],
    );

    const set = await api('/v3/collections/schedule', {
      method: 'PUT',
      body: {
        steps: [
          { offset_days: 1, channels: ['email'] },
          { offset_days: -3, channels: ['webhook', 'email'] },
        ],
      },
    });
    expect(set.status).toBe(200);
    const stored = (await set.json()) as { steps: unknown[]; updated_at: string };
    expect(stored.steps).toEqual([
      { offset_days: -3, channels: ['email', 'webhook'] },
      { offset_days: 1, channels: ['email'] },
    ]);
    expect(await (await api('/v3/collections/schedule')).json()).toEqual(stored);
  });

  it('reminds each unpaid row once per step and channel on the sandbox clock, skips a paid row, and stops e-mailing after the opt-out', async () => {
    const loan = await activeLoan(stack, api, { opsToken: OPS_TOKEN });
    const customer = (await (await api(`/v3/customers/${loan.customer_id}`)).json()) as {
      email: string;
    };
    const [row1, row2, row3] = loan.schedule;

    // Three days before row 1: an e-mail and the event, with a charge for what row 1 asks that day.
    await advance(loan.customer_id, noonOf(addDays(row1!.due_date, -3)));
    const [before] = await eventually(async () => {
      const events = await remindersOf(loan.id);
      return events.length === 1 ? events : undefined;
    }, 'the −3 reminder event');
    expect(before!.data).toMatchObject({
      offset_days: -3,
      channels: ['email', 'webhook'],
      installment: { number: 1, due_date: row1!.due_date },
    });
    const payoff = (await (
      await api(`/v3/loans/${loan.id}/payoff?date=${addDays(row1!.due_date, -3)}`)
    ).json()) as { rows: { number: number; present_value: number }[] };
    // Before its due date a row asks its present value that day (contract §12–§13).
    expect(before!.data.installment.amount_due).toBe(payoff.rows[0]!.present_value);
    expect(before!.data.installment.amount_due).toBeLessThan(row1!.installment_amount);
    const charge = before!.data.charge!;
    const chargeBody = (await (await api(`/v3/charges/${charge.id}`)).json()) as {
      amount: number;
      status: string;
      br_code: string;
    };
    expect(chargeBody).toMatchObject({
      amount: before!.data.installment.amount_due,
      status: 'active',
      br_code: charge.br_code,
    });
    let mail = await eventually(async () => {
      const found = await mailTo(customer.email);
      return found.length === 1 ? found : undefined;
    }, 'the −3 reminder e-mail');
    expect(mail[0]!.subject).toContain('Lembrete: parcela 1');
    expect(mail[0]!.text).toContain('vence em 3 dias');
    expect(mail[0]!.text).toContain(formatBrl(before!.data.installment.amount_due));
    expect(mail[0]!.text).toContain(charge.br_code);
    const optOutLink = /https?:\/\/\S+\/hosted\/reminders\/\S+/.exec(mail[0]!.text)?.[0];
    expect(optOutLink).toBeDefined();

    // The same day's reminders sent again (a retry, or a worker restarted mid-way): nothing twice.
    await stack.activities().sendReminders({
      tenant: { partnerId, environment: 'sandbox' },
      loanId: loan.id,
      date: addDays(row1!.due_date, -3),
    });
    expect(await remindersOf(loan.id)).toHaveLength(1);
    expect(await mailTo(customer.email)).toHaveLength(1);

    // A day after row 1's due date, still unpaid: the +1 e-mail with late charges, no event.
    await advance(loan.customer_id, noonOf(addDays(row1!.due_date, 1)));
    mail = await eventually(async () => {
      const found = await mailTo(customer.email);
      return found.length === 2 ? found : undefined;
    }, 'the +1 reminder e-mail');
    expect(mail[1]!.text).toContain('está em atraso há 1 dia');
    expect(mail[1]!.text).toContain('com multa e juros de atraso');
    const late = (await loanOf(loan.id)).schedule[0]!;
    expect(late.status).toBe('overdue');
    expect(mail[1]!.text).toContain(formatBrl(late.amount_due));
    expect(await remindersOf(loan.id)).toHaveLength(1);

    // The borrower pays with the e-mail's Pix code: the charge it names is what the sandbox pays.
    const charges = (await (await api(`/v3/loans/${loan.id}/charges?limit=100`)).json()) as {
      data: { id: string; br_code: string; status: string; amount: number }[];
    };
    const emailed = charges.data.find((c) => mail[1]!.text.includes(c.br_code));
    expect(emailed).toMatchObject({ status: 'active', amount: late.amount_due });
    const paid = await api(`/v3/sandbox/charges/${emailed!.id}/pay`, { method: 'POST', body: {} });
    expect(paid.status).toBe(200);
    // Row 2 paid early too (a charge for the next row, paid at once).
    const next = (await (
      await api(`/v3/loans/${loan.id}/charges`, { method: 'POST', body: { scope: 'next' } })
    ).json()) as { id: string };
    expect(
      (await api(`/v3/sandbox/charges/${next.id}/pay`, { method: 'POST', body: {} })).status,
    ).toBe(200);
    const repaying = await loanOf(loan.id);
    expect(repaying.schedule.map((row) => row.status)).toEqual(['paid', 'paid', 'pending']);

    // The borrower opts out on the page the e-mail links to: a GET changes nothing, the form does.
    const browser = new HostedBrowser(stack.baseUrl, optOutLink!);
    const page = await browser.fetch();
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Parar os lembretes por e-mail?');
    const confirmed = await browser.post('', {});
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain('Lembretes por e-mail desativados');
    const forged = new HostedBrowser(
      stack.baseUrl,
      optOutLink!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
    );
    expect((await forged.fetch()).status).toBe(404);

    // Row 2 (paid) is reminded of nothing; row 3 three days ahead: the event goes on, no e-mail.
    await advance(loan.customer_id, noonOf(addDays(row3!.due_date, -3)));
    const events = await eventually(async () => {
      const found = await remindersOf(loan.id);
      return found.length === 2 ? found : undefined;
    }, 'the −3 event of row 3');
    expect(events[1]!.data).toMatchObject({
      offset_days: -3,
      installment: { number: 3, due_date: row3!.due_date },
      charge: null,
    });
    expect(events.some((event) => event.data.installment.number === row2!.number)).toBe(false);
    expect(await mailTo(customer.email)).toHaveLength(2);

    await recordHistory(
      stack.temporal.workflow.getHandle(workflowIds.reminders(loan.id)),
      'reminders',
      'reminded-paid-opted-out',
    );
  });
});
