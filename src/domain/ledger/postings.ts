/**
 * The loans' double-entry ledger (contract §13, "A double-entry ledger"): the chart of accounts
 * and what each money movement posts. Pure: the activities post these entries with the loan change
 * they record, and the reconciliation reads them back. Amounts are integer centavos, each entry
 * positive; a transaction's debits equal its credits.
 */

/** The chart of accounts. Balances are debits − credits (assets positive, the rest negative). */
export const ledgerAccounts = [
  /** What borrowers owe of principal (an asset). */
  'loan_principal',
  /** Money sent to borrowers, until the bank statement clears it. */
  'disbursement_clearing',
  /** Money received from borrowers, until the bank statement clears it. */
  'collections_clearing',
  /** IOF financed in the loans, owed to the tax authority. */
  'iof_payable',
  'interest_income',
  'late_fee_income',
  'late_interest_income',
  /** Money received that belongs back to a borrower (the Pix issue's). */
  'refunds_payable',
  /**
   * Money received that no loan claims yet (a Pix whose txid names no charge): in the lender's
   * account from its arrival, until ops match it to a loan or return it to its payer.
   */
  'unidentified_receipts',
  /** Principal written off (contract §17): an expense, the loss the book took. */
  'credit_losses',
  /** Money received for a written-off loan: income that offsets `credit_losses`. */
  'recoveries',
  /**
   * Contract §17: the part of a refinancing's release that pays its old loans off — credited by
   * the new loan's disbursement, debited by each old loan's payoff in the same database
   * transaction, so it always nets to zero (the reconciliation checks it).
   */
  'refinancing_clearing',
  /**
   * Interest and late charges a payment agreement forgave (contract §17, docs/agreements.md): an
   * expense, booked when the agreement takes over the rows it covers.
   */
  'agreement_discounts',
  /**
   * Contract §19 (docs/assignments.md): what buyers of sold loans owe for them — the price, debited
   * when an assignment settles, until the buyer's money arrives.
   */
  'assignment_receivable',
  /** The gain (credit) or loss (debit) of each sale: its price less what the book carried. */
  'assignment_result',
  /** Money received on sold loans, owed to their buyer until remitted. */
  'payable_to_assignee',
] as const;
export type LedgerAccount = (typeof ledgerAccounts)[number];

export const entryDirections = ['debit', 'credit'] as const;
export type EntryDirection = (typeof entryDirections)[number];

export interface LedgerEntry {
  account: LedgerAccount;
  direction: EntryDirection;
  amount: number;
}

const debit = (account: LedgerAccount, amount: number): LedgerEntry => ({
  account,
  direction: 'debit',
  amount,
});
const credit = (account: LedgerAccount, amount: number): LedgerEntry => ({
  account,
  direction: 'credit',
  amount,
});

/** Entries of a zero amount say nothing: they are left out. */
const posted = (entries: LedgerEntry[]): LedgerEntry[] => {
  for (const entry of entries)
    if (!Number.isSafeInteger(entry.amount) || entry.amount < 0)
      throw new RangeError(`not an entry amount: ${entry.account} ${entry.amount}`);
  const kept = entries.filter((entry) => entry.amount > 0);
  if (!isBalanced(kept)) throw new UnbalancedTransactionError(kept);
  return kept;
};

/**
 * The money leaves: the borrower owes the principal (debit `loan_principal`), the requested
 * amount goes out (credit `disbursement_clearing`) and the financed IOF is owed to the tax
 * authority (credit `iof_payable`). A loan released later than priced posts its repriced figures.
 */
export function disbursementEntries(figures: {
  principal_amount: number;
  requested_amount: number;
  iof_amount: number;
}): LedgerEntry[] {
  return posted([
    debit('loan_principal', figures.principal_amount),
    credit('disbursement_clearing', figures.requested_amount),
    credit('iof_payable', figures.iof_amount),
  ]);
}

/**
 * A refinancing's release (contract §17): as `disbursementEntries`, but of the requested amount
 * only the new money goes out (`disbursement_clearing`); what pays the old loans off stays in the
 * book (`refinancing_clearing`, which each old loan's payoff debits).
 */
export function refinancingDisbursementEntries(
  figures: { principal_amount: number; requested_amount: number; iof_amount: number },
  refinanced: number,
): LedgerEntry[] {
  if (refinanced > figures.requested_amount)
    throw new RangeError('the refinanced balances exceed the requested amount');
  return posted([
    debit('loan_principal', figures.principal_amount),
    credit('disbursement_clearing', figures.requested_amount - refinanced),
    credit('refinancing_clearing', refinanced),
    credit('iof_payable', figures.iof_amount),
  ]);
}

/**
 * Where money received for a loan is drawn from: the cash as it arrives (`collections_clearing`),
 * or — a Pix that came unmatched and ops matched to the loan later — the account that held it
 * since (`unidentified_receipts`).
 */
export type CashAccount = 'collections_clearing' | 'unidentified_receipts';

/**
 * Money in: the cash received (debit `collections_clearing`, or `from`) pays principal, contract
 * interest and late charges; what the loan did not owe (a Pix above the payoff) is due back to
 * the borrower (credit `refunds_payable`). A discount is interest never earned: it posts nothing.
 */
export function paymentEntries(payment: {
  amount: number;
  principal: number;
  interest: number;
  lateFee: number;
  lateInterest: number;
  refund?: number;
  /** A refinancing's payoff draws on `refinancing_clearing` (contract §17). */
  from?: CashAccount | 'refinancing_clearing' | undefined;
}): LedgerEntry[] {
  return posted([
    debit(payment.from ?? 'collections_clearing', payment.amount),
    credit('loan_principal', payment.principal),
    credit('interest_income', payment.interest),
    credit('late_fee_income', payment.lateFee),
    credit('late_interest_income', payment.lateInterest),
    credit('refunds_payable', payment.refund ?? 0),
  ]);
}

/** Money received for a loan that no longer owes anything: all of it is due back. */
export function overpaymentEntries(
  amount: number,
  from: CashAccount = 'collections_clearing',
): LedgerEntry[] {
  return posted([debit(from, amount), credit('refunds_payable', amount)]);
}

/** A Pix no loan claims arrives: the cash is in, owed to nobody yet. */
export function unidentifiedReceiptEntries(amount: number): LedgerEntry[] {
  return posted([debit('collections_clearing', amount), credit('unidentified_receipts', amount)]);
}

/** Ops return an unclaimed Pix to its payer: what it brought is owed back. */
export function returnedReceiptEntries(amount: number): LedgerEntry[] {
  return posted([debit('unidentified_receipts', amount), credit('refunds_payable', amount)]);
}

/** Money sent back to the borrower: what was due back leaves (like a disbursement's). */
export function refundEntries(amount: number): LedgerEntry[] {
  return posted([debit('refunds_payable', amount), credit('disbursement_clearing', amount)]);
}

/**
 * A withdrawal (CDC art. 49, contract §14): the borrower returns the amount released less what it
 * paid, and the loan is undone — its principal account closed, the IOF reversed, and the interest
 * and late charges it had paid taken back out of income (they count as money returned). `balances`
 * are the loan's account balances before (debits − credits); what came in above the amount owed is
 * due back.
 */
export function withdrawalEntries(
  received: number,
  refund: number,
  balances: Partial<Record<LedgerAccount, number>>,
): LedgerEntry[] {
  const owedBack = (account: LedgerAccount) => -(balances[account] ?? 0);
  return posted([
    debit('collections_clearing', received),
    debit('iof_payable', owedBack('iof_payable')),
    debit('interest_income', owedBack('interest_income')),
    debit('late_fee_income', owedBack('late_fee_income')),
    debit('late_interest_income', owedBack('late_interest_income')),
    credit('loan_principal', balances.loan_principal ?? 0),
    credit('refunds_payable', refund),
  ]);
}

/**
 * A production loan's payout came back (contract §16: the receiving bank returned it): the loan is
 * undone as a withdrawal undoes it — its principal account closed, the IOF reversed, interest and
 * late charges it had paid taken back out of income — with the money returned to the lender's
 * account (debit `disbursement_clearing`, which the payout had credited). The borrower never had
 * the money, so everything they paid is due back to them (credit `refunds_payable`: what balances
 * the rest). `balances` are the loan's account balances before (debits − credits).
 */
export function payoutReturnedEntries(
  returned: number,
  balances: Partial<Record<LedgerAccount, number>>,
): LedgerEntry[] {
  const owedBack = (account: LedgerAccount) => -(balances[account] ?? 0);
  const reversed =
    returned +
    owedBack('iof_payable') +
    owedBack('interest_income') +
    owedBack('late_fee_income') +
    owedBack('late_interest_income');
  const principal = balances.loan_principal ?? 0;
  return posted([
    debit('disbursement_clearing', returned),
    debit('iof_payable', owedBack('iof_payable')),
    debit('interest_income', owedBack('interest_income')),
    debit('late_fee_income', owedBack('late_fee_income')),
    debit('late_interest_income', owedBack('late_interest_income')),
    credit('loan_principal', principal),
    credit('refunds_payable', reversed - principal),
  ]);
}

/**
 * A loan written off (contract §17): its unpaid principal leaves the book (credit
 * `loan_principal`) as a loss (debit `credit_losses`). What the borrower owes is unchanged.
 */
export function writeOffEntries(principal: number): LedgerEntry[] {
  return posted([debit('credit_losses', principal), credit('loan_principal', principal)]);
}

/** What a payment's allocation credits on a loan still on the book. */
const earnedAccounts: readonly LedgerAccount[] = [
  'loan_principal',
  'interest_income',
  'late_fee_income',
  'late_interest_income',
];

/**
 * Money received for a written-off loan: the borrower's rows are paid as §13 allocates, but the
 * book holds none of it any more (its principal went to `credit_losses`, its interest was never
 * earned), so every part the allocation would credit to principal, interest or late charges is
 * credited to `recoveries` instead, in one entry; money due back stays `refunds_payable`.
 */
export function recoveryEntries(entries: readonly LedgerEntry[]): LedgerEntry[] {
  const recovered = entries
    .filter((entry) => entry.direction === 'credit' && earnedAccounts.includes(entry.account))
    .reduce((sum, entry) => sum + entry.amount, 0);
  return posted([
    ...entries.filter(
      (entry) => !(entry.direction === 'credit' && earnedAccounts.includes(entry.account)),
    ),
    credit('recoveries', recovered),
  ]);
}

/**
 * A payment's entries as the book takes them: `recoveries` once the loan is written off;
 * `payable_to_assignee` once it was sold (`assignedEntries`).
 */
export const bookedFor = (
  loan: { writtenOffAt: Date | null; assignmentId?: string | null | undefined },
  entries: LedgerEntry[],
): LedgerEntry[] =>
  loan.assignmentId
    ? assignedEntries(entries)
    : loan.writtenOffAt
      ? recoveryEntries(entries)
      : entries;

/**
 * The sale of a loan (contract §19, docs/assignments.md): its principal leaves the book (credit
 * `loan_principal`) with the interest and late charges accrued to the settlement date, earned then
 * (credit the incomes); the buyer owes the price (debit `assignment_receivable`); what the price is
 * above or below what the book carried is the sale's gain or loss (`assignment_result`).
 */
export function assignmentEntries(sale: {
  price: number;
  principal: number;
  interest: number;
  lateFee: number;
  lateInterest: number;
}): LedgerEntry[] {
  const result = sale.price - sale.principal - sale.interest - sale.lateFee - sale.lateInterest;
  return posted([
    debit('assignment_receivable', sale.price),
    credit('loan_principal', sale.principal),
    credit('interest_income', sale.interest),
    credit('late_fee_income', sale.lateFee),
    credit('late_interest_income', sale.lateInterest),
    result >= 0 ? credit('assignment_result', result) : debit('assignment_result', -result),
  ]);
}

/**
 * The buyer pays a sale's price (contract §19, docs/assignments.md): the money arrives at the
 * lender's account (debit `collections_clearing`, as every receipt until the bank statement clears
 * it) and the buyer owes nothing more (credit `assignment_receivable`).
 */
export function priceReceivedEntries(price: number): LedgerEntry[] {
  return posted([debit('collections_clearing', price), credit('assignment_receivable', price)]);
}

/**
 * A day's collections on sold loans remitted to their buyer: the debt to the buyer is paid (debit
 * `payable_to_assignee`) by money leaving the lender's account (credit `disbursement_clearing`, as
 * every payment out until the bank statement clears it).
 */
export function remittanceEntries(amount: number): LedgerEntry[] {
  return posted([debit('payable_to_assignee', amount), credit('disbursement_clearing', amount)]);
}

/**
 * Money received on a sold loan: the borrower's rows are paid as §13 allocates, but the book holds
 * none of the loan, so every part the allocation would credit to principal, interest or late
 * charges is owed to the buyer (`payable_to_assignee`, one entry); money due back stays
 * `refunds_payable`.
 */
export function assignedEntries(entries: readonly LedgerEntry[]): LedgerEntry[] {
  const owed = entries
    .filter((entry) => entry.direction === 'credit' && earnedAccounts.includes(entry.account))
    .reduce((sum, entry) => sum + entry.amount, 0);
  return posted([
    ...entries.filter(
      (entry) => !(entry.direction === 'credit' && earnedAccounts.includes(entry.account)),
    ),
    credit('payable_to_assignee', owed),
  ]);
}

/**
 * A sold loan withdrawn (CDC art. 49, contract §14): the money the borrower returns is the buyer's
 * (`payable_to_assignee`), less what is due back to the borrower (`refunds_payable`); when more is
 * due back than came in (payments above the amount released), the buyer owes the difference back.
 * The book holds nothing else of the loan.
 */
export function assignedWithdrawalEntries(received: number, refund: number): LedgerEntry[] {
  const toBuyer = received - refund;
  return posted([
    debit('collections_clearing', received),
    credit('refunds_payable', refund),
    toBuyer >= 0 ? credit('payable_to_assignee', toBuyer) : debit('payable_to_assignee', -toBuyer),
  ]);
}

/**
 * A payment agreement takes over the rows it covers (contract §17): what the borrower owed of them
 * becomes the agreement's balance, its principal. The interest and late charges in the debt are
 * earned then (credit the incomes), the discount granted on them is an expense
 * (`agreement_discounts`), and `loan_principal` grows by the charges kept (agreed − principal).
 */
export function agreementEntries(figures: {
  principal_amount: number;
  interest_amount: number;
  late_fee_amount: number;
  late_interest_amount: number;
  discount_amount: number;
  agreed_amount: number;
}): LedgerEntry[] {
  return posted([
    debit('loan_principal', figures.agreed_amount - figures.principal_amount),
    debit('agreement_discounts', figures.discount_amount),
    credit('interest_income', figures.interest_amount),
    credit('late_fee_income', figures.late_fee_amount),
    credit('late_interest_income', figures.late_interest_amount),
  ]);
}

/**
 * Moves each account's balance (debits − credits) from `current` to `target`, and credits
 * `refunds_payable` with `refund`: the entries of a true-up (an agreement undone by its break).
 */
export function trueUpEntries(
  current: Partial<Record<LedgerAccount, number>>,
  target: Partial<Record<LedgerAccount, number>>,
  refund = 0,
): LedgerEntry[] {
  const accounts = new Set([...Object.keys(current), ...Object.keys(target)] as LedgerAccount[]);
  const entries: LedgerEntry[] = [];
  for (const account of accounts) {
    const move = (target[account] ?? 0) - (current[account] ?? 0);
    if (move !== 0) entries.push(move > 0 ? debit(account, move) : credit(account, -move));
  }
  if (refund > 0) entries.push(credit('refunds_payable', refund));
  return entries.length === 0 ? [] : posted(entries);
}

/** Debits minus credits. */
export const signedSum = (entries: readonly LedgerEntry[]): number =>
  entries.reduce(
    (sum, entry) => sum + (entry.direction === 'debit' ? entry.amount : -entry.amount),
    0,
  );

export const isBalanced = (entries: readonly LedgerEntry[]): boolean =>
  entries.length > 0 && signedSum(entries) === 0;

export class UnbalancedTransactionError extends Error {
  constructor(readonly entries: readonly LedgerEntry[]) {
    super(`debits and credits differ by ${signedSum(entries)} centavos`);
  }
}
