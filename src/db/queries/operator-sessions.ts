import { and, eq, isNull } from 'drizzle-orm';
import type { Operator } from '../../domain/operators.js';
import { hashSecret } from '../../domain/secrets.js';
import type { DbOrTx } from '../client.js';
import { operators, operatorTokens } from '../schema/index.js';

/**
 * A session made from an operator's token lasts only while that token does: these name the token a
 * session was made from, and find its operator again on each use (none once the token is revoked
 * or rotated, or the operator deactivated).
 */
export async function liveTokenIdOf(db: DbOrTx, token: string): Promise<string | undefined> {
  const [row] = await db
    .select({ id: operatorTokens.id })
    .from(operatorTokens)
    .where(and(eq(operatorTokens.tokenHash, hashSecret(token)), isNull(operatorTokens.revokedAt)));
  return row?.id;
}

export async function operatorOfLiveToken(
  db: DbOrTx,
  session: { operatorId: string; tokenId: string },
): Promise<Operator | undefined> {
  const [row] = await db
    .select({ id: operators.id, roles: operators.roles })
    .from(operatorTokens)
    .innerJoin(operators, eq(operators.id, operatorTokens.operatorId))
    .where(
      and(
        eq(operatorTokens.id, session.tokenId),
        eq(operators.id, session.operatorId),
        isNull(operatorTokens.revokedAt),
        isNull(operators.deactivatedAt),
      ),
    );
  return row && { actor: { type: 'operator', id: row.id }, roles: row.roles };
}
