import { sandboxOfferTerms, type OfferTerms } from '../credit/offers.js';
import { formatBrl, formatRate } from '../money.js';
import { creditAnalysisFor } from './credit-analysis.js';

/**
 * Fresh sandbox CPFs for partners' test data (issue 42): a CPF is one customer per partner and
 * environment, so a rerun needs a new one. The sandbox reads its outcome off the digits
 * (credit-analysis.ts, offers.ts): a first digit of 9 gets no offer; otherwise digits 2–3 set the
 * limit, digit 4 the rate and digit 5 the longest term. A prefix fixes those digits; the rest are
 * random, so each call gives a CPF nobody has registered, with the outcome the prefix chose.
 */

/** The two check digits of a CPF's first nine (the Receita Federal's mod-11 rule). */
export function cpfCheckDigits(nine: string): string {
  if (!/^\d{9}$/.test(nine)) throw new Error('expected the first nine digits of a CPF');
  const digitAfter = (digits: string) => {
    const weighted = [...digits].reduce(
      (sum, digit, index) => sum + Number(digit) * (digits.length + 1 - index),
      0,
    );
    const rest = (weighted * 10) % 11;
    return rest === 10 ? 0 : rest;
  };
  const first = digitAfter(nine);
  return `${first}${digitAfter(`${nine}${first}`)}`;
}

/**
 * A valid CPF starting with `prefix` (up to nine digits), the other digits drawn by `randomDigit`.
 * Without a prefix the first digit is not 9, so the CPF gets an offer.
 */
export function sandboxCpf(prefix: string, randomDigit: (below: number) => number): string {
  if (!/^\d{0,9}$/.test(prefix)) throw new Error('a prefix is up to nine digits');
  for (;;) {
    let nine = prefix;
    if (nine === '') nine = String(randomDigit(9));
    while (nine.length < 9) nine += String(randomDigit(10));
    // Eleven equal digits pass the arithmetic but no CPF is issued so; the API refuses them.
    const cpf = `${nine}${cpfCheckDigits(nine)}`;
    if (!/^(\d)\1{10}$/.test(cpf)) return cpf;
    if (prefix.length === 9) throw new Error(`no valid CPF starts with ${prefix}`);
  }
}

export type SandboxOutcome = { offer: OfferTerms } | { rejected: string };

/** What the sandbox does with a customer registered with this CPF: its offer, or none. */
export function sandboxOutcome(cpf: string): SandboxOutcome {
  const analysis = creditAnalysisFor({ cpf, environment: 'sandbox', at: new Date(0) });
  if (analysis.approved_limit_amount === null) return { rejected: analysis.reason ?? 'no offer' };
  return { offer: sandboxOfferTerms(cpf, analysis.approved_limit_amount) };
}

/** One line a person reads: `offer of up to R$ 34.000,00 at 2,49 % a month, 3–12 installments`. */
export function describeOutcome(outcome: SandboxOutcome): string {
  if ('rejected' in outcome) return `no offer (${outcome.rejected})`;
  const { approvedAmount, monthlyInterestRate, minInstallments, maxInstallments } = outcome.offer;
  return `offer of up to ${formatBrl(approvedAmount)} at ${formatRate(monthlyInterestRate)} a month, ${minInstallments}–${maxInstallments} installments`;
}
