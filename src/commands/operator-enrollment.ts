import { randomBytes } from 'node:crypto';
import {
  findOperator,
  issueOperatorToken,
  startAudit,
  finishAudit,
} from '../db/queries/operators.js';
import type { OperatorRecord } from '../db/queries/operators.js';
import { redeemEnrollment } from '../db/queries/operator-enrollments.js';
import type { Db } from '../db/client.js';
import type { OperatorRole } from '../domain/operators.js';
import { hashSecret } from '../domain/secrets.js';
import { problems } from '../errors.js';
import type { Mailer } from '../mail/mailer.js';

/** How long a mailed code can be redeemed: a working day and a night. */
export const ENROLLMENT_VALIDITY_MS = 24 * 60 * 60 * 1000;

/** A one-time code: 256 random bits, mailed once, kept only as its SHA-256. */
const newEnrollmentCode = () => `oen_${randomBytes(32).toString('base64url')}`;

export interface EnrollmentMailDeps {
  mailer: Mailer;
  clock: () => Date;
}

/** Why an operator is sent a code. */
export type EnrollmentReason = 'created' | 'reactivated' | 'rotated';

const opening: Record<EnrollmentReason, (roles: readonly OperatorRole[]) => string> = {
  created: (roles) => `Um acesso de operador foi aprovado para você (papéis: ${roles.join(', ')}).`,
  reactivated: () => 'Seu acesso de operador foi reativado.',
  rotated: () => 'Um novo token de operador foi aprovado para você; os anteriores foram revogados.',
};

/**
 * A new operator token reaches the operator alone (issue 37): neither the administrator who
 * asked nor the one who approved ever sees it. The operator's own address gets a one-time code,
 * which the operator exchanges for the token (`POST /ops/v1/operator-enrollments`). The mail goes
 * first: the caller then records the code's hash with the change it belongs to, in one
 * transaction, so a failure in between leaves a mailed code that opens nothing (the retry mails
 * another) and never a change with no code.
 */
export async function mailEnrollmentCode(
  deps: EnrollmentMailDeps,
  operator: { name: string; email: string; roles: readonly OperatorRole[] },
  reason: EnrollmentReason,
): Promise<{ codeHash: string; now: Date; expiresAt: Date }> {
  const code = newEnrollmentCode();
  const now = deps.clock();
  await deps.mailer.send({
    to: operator.email,
    subject: 'Seu acesso de operador',
    text: [
      `Olá, ${operator.name}.`,
      '',
      opening[reason](operator.roles),
      '',
      'Para receber o seu token, troque este código uma única vez, em até 24 horas:',
      '',
      code,
      '',
      `POST /ops/v1/operator-enrollments com o corpo {"code": "${code}"}`,
      '',
      'Ninguém mais recebe este código: nem quem pediu o seu acesso, nem quem o aprovou. Se não esperava este e-mail, avise a administração.',
    ].join('\n'),
  });
  return {
    codeHash: hashSecret(code),
    now,
    expiresAt: new Date(now.getTime() + ENROLLMENT_VALIDITY_MS),
  };
}

/**
 * The operator exchanges a mailed code for a token: once, before it expires, while the operator
 * is active. The exchange is audited under the operator's name. An unknown, used or expired code
 * is 401 with one answer for all three.
 */
export async function redeemEnrollmentCode(
  deps: { db: Db; clock: () => Date },
  code: string,
  request: { method: string; path: string; requestId: string },
): Promise<{ operator: OperatorRecord; token: string }> {
  const refused = () =>
    problems.unauthorized(
      'This code is unknown, used or expired: ask an administrator for another.',
    );
  return deps.db.transaction(async (tx) => {
    const now = deps.clock();
    const operatorId = await redeemEnrollment(tx, hashSecret(code), now);
    const operator = operatorId && (await findOperator(tx, operatorId));
    if (!operator || operator.deactivatedAt) throw refused();
    const token = await issueOperatorToken(tx, operator.id);
    const audit = await startAudit(tx, {
      actor: { type: 'operator', id: operator.id },
      operationId: 'redeemOperatorEnrollment',
      ...request,
      at: now,
    });
    await finishAudit(tx, audit, {
      status: 201,
      problemCode: null,
      detail: { operator_id: operator.id },
      at: now,
    });
    return { operator, token };
  });
}
