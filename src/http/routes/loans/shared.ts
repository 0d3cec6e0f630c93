import { sendFile } from '../../send-file.js';
import { clockNow } from '../../../commands/customer-clock.js';
import type { LoanDeps } from '../../../commands/loan-deps.js';
import { businessDate } from '../../../domain/business-date.js';
import type { LoanView } from '../../../db/queries/loans.js';
import type { AppContext } from '../../context.js';
import { presentLoan } from '../../../presenters/loans.js';
import { loanSchema } from './schema.js';

export const tag = 'Loans';

/** Presents a loan as it stands today on its customer's clock (late charges grow by the day). */
export const presenter = (deps: LoanDeps) => (loan: LoanView) =>
  presentLoan(loan, deps.signingUrl, businessDate(clockNow(loan, deps.clock())));
export const loanResponse = (description: string) => ({ 200: { description, schema: loanSchema } });

/** Sends the contract PDF of a loan (the partner's download and the signing page's link). */
export async function sendContract(
  ctx: AppContext,
  deps: LoanDeps,
  loan: LoanView,
  disposition: 'inline' | 'attachment' = 'inline',
) {
  const file = await deps.files.open(loan.contractKey);
  if (!file) throw new Error(`contract of ${loan.id} missing from the file store`);
  sendFile(ctx, file, 'application/pdf', `${disposition}; filename="ccb-${loan.id}.pdf"`);
}
