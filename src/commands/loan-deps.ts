import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import type { IofRates } from '../domain/credit/simulation.js';
import type { KeyRing } from '../domain/key-ring.js';
import type { LateChargeRates } from '../domain/loans/repayment.js';
import { problems } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AcceptanceUrl } from '../presenters/agreements.js';
import type { SigningUrl } from '../presenters/loans.js';
import type { FileStore } from '../storage/file-store.js';

/** What loan commands need. */
export interface LoanDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  files: FileStore;
  taskQueue: string;
  clock: () => Date;
  signingUrl: SigningUrl;
  /** Keys of the signing links' tokens (see `signingToken`). */
  signingLinkKeys: KeyRing;
  /** LOAN_SIGNATURE_DEADLINE */
  signatureDeadlineMs: number;
  lender: { name: string; cnpj: string };
  /** LATE_FEE_RATE and LATE_INTEREST_MONTHLY_RATE, fixed in each new loan. */
  lateChargeRates: LateChargeRates;
  /** The IOF rates, fixed in each new loan (a later release recomputes its IOF at them). */
  iof: IofRates;
  /** SANDBOX_DISBURSEMENT_DELAY, handed to each sandbox loan's workflow. */
  sandboxDisbursementDelayMs: number;
  /**
   * Payment agreements (contract §17): their acceptance page's address, and AGREEMENT_BREAK_DAYS,
   * which their term states.
   */
  agreements: { acceptanceUrl: AcceptanceUrl; breakDays: number };
}

export const loanNotFound = (id: string) => problems.notFound('loan_not_found', `No loan ${id}.`);
