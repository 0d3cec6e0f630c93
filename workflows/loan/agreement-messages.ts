import { defineSignal } from '@temporalio/workflow';

/**
 * A command changed the loan's live agreement (made it, or the borrower accepted it): the loan's
 * workflow reads it again (`liveAgreementDeadline`) and waits for its deadline. Carries nothing:
 * the record is the truth, and a repeated signal is harmless.
 */
export const agreementChangedSignal = defineSignal('agreement-changed');
