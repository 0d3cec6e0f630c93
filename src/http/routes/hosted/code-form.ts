import type { CodeCheckOutcome } from '../../../commands/verification.js';
import type { VerificationCode } from '../../../db/queries/verification-codes.js';
import {
  isCodeShaped,
  normalizeCode,
  verificationRules,
} from '../../../domain/verification-codes.js';
import type { AppContext } from '../../context.js';
import { field } from './respond.js';

/**
 * A hosted link's `POST …/verify {code_id, code}` (the signing page's, the acceptance page's): the
 * form checked, the code checked by `check`, a missing, malformed, spent or wrong code answered on
 * the page again, and a right one opening the session — an HttpOnly cookie bound to the link's
 * path (`verificationRules.sessionTtlMs`), and a redirect there.
 */
export async function answerCodeForm(
  ctx: AppContext,
  form: {
    /** The link's page: the cookie's path and the redirect's target. */
    path: string;
    cookie: string;
    https: boolean;
    /** The page that asks for a code, again, with an error. */
    again: (status: number, text: string) => void;
    /** The page that takes the code, again, with an error (the code, when the check found it). */
    codeAgain: (
      status: number,
      codeId: string,
      code: VerificationCode | undefined,
      text: string,
    ) => void;
    check: (codeId: string, code: string) => Promise<CodeCheckOutcome>;
  },
): Promise<void> {
  const codeId = field(ctx, 'code_id');
  const code = normalizeCode(field(ctx, 'code'));
  if (!codeId || !code) return form.again(422, 'Peça um código e digite-o para continuar.');
  if (!isCodeShaped(code)) return form.codeAgain(422, codeId, undefined, 'O código tem 6 dígitos.');
  const checked = await form.check(codeId, code);
  if (checked.kind === 'spent')
    return form.again(422, 'Este código expirou ou já foi usado. Peça um novo código.');
  if (checked.kind === 'wrong')
    return checked.attemptsLeft === 0
      ? form.again(422, 'Código incorreto e sem tentativas restantes. Peça um novo código.')
      : form.codeAgain(
          422,
          codeId,
          checked.code,
          `Código incorreto. Restam ${checked.attemptsLeft} tentativas.`,
        );
  ctx.append(
    'Set-Cookie',
    [
      `${form.cookie}=${checked.sessionToken}`,
      `Path=${form.path}`,
      `Max-Age=${verificationRules.sessionTtlMs / 1000}`,
      'HttpOnly',
      'SameSite=Strict',
      ...(form.https ? ['Secure'] : []),
    ].join('; '),
  );
  ctx.status = 303;
  ctx.set('Location', form.path);
  ctx.body = '';
}
