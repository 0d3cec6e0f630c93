import { defineUpdate } from '@temporalio/workflow';

/**
 * Contract §17: the release of new loan `newLoanId` paid this loan off (its `refinancing`
 * transaction, `finished` with `finished_reason: "refinanced"` and `loan.finished`, written with
 * the new loan's release in one database transaction). Sent by the new loan's workflow, through an
 * activity, with update id `refinanced:{newLoanId}`: the loan's workflow checks the record, stops
 * watching and, the credit line going on in the new loan, does not tell its offer it finished.
 * Refused with `invalid_state` when the record says otherwise.
 */
export const finishRefinancedUpdate = defineUpdate<
  { finished: true },
  [{ newLoanId: string; payoffAmount: number }]
>('finish-refinanced');
