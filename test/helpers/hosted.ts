import { codeIn, waitForMessage } from './mailbox.js';

/** The sandbox's published code (contract §15); production codes come from the mailbox. */
export const SANDBOX_CODE = '000000';

const codeIdIn = (html: string): string => {
  const id = /name="code_id" value="([^"]+)"/.exec(html)?.[1];
  if (!id) throw new Error(`no code form in the page:\n${html.slice(0, 500)}`);
  return id;
};

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

/** Where the code comes from: the sandbox's fixed one, or the e-mail sent to this address. */
export type CodeSource = { sandbox: true } | { email: string };

async function codeFrom(source: CodeSource, after: Date): Promise<string> {
  if ('sandbox' in source) return SANDBOX_CODE;
  return codeIn(await waitForMessage(source.email, { after }));
}

/**
 * What a customer does on the hosted biometrics page: asks for a code, types it, and the capture
 * is recorded. Returns the last answer (200 and "Captura recebida" when it worked).
 */
export async function completeBiometricsCapture(
  baseUrl: string,
  sessionUrl: string,
  source: CodeSource = { sandbox: true },
): Promise<Response> {
  const path = `${baseUrl}${new URL(sessionUrl).pathname}`;
  const asked = new Date(Date.now() - 1000);
  const sent = await fetch(`${path}/code`, { method: 'POST' });
  if (sent.status !== 200) return sent;
  const codeId = codeIdIn(await sent.text());
  return fetch(path, form({ code_id: codeId, code: await codeFrom(source, asked) }));
}

/** A signer's browser on the signing link: its one cookie is the session a code opened. */
export class SigningBrowser {
  private cookie: string | undefined;
  readonly path: string;

  constructor(
    private readonly baseUrl: string,
    signingUrl: string,
    private readonly userAgent = 'test-signer',
  ) {
    this.path = new URL(signingUrl).pathname;
  }

  fetch(suffix = '', init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.baseUrl}${this.path}${suffix}`, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string> | undefined),
        'User-Agent': this.userAgent,
        ...(this.cookie ? { Cookie: this.cookie } : {}),
      },
    });
  }

  /** Asks for a code for `cpf`; returns the answer and the code form's id when one was sent. */
  async requestCode(cpf: string): Promise<{ response: Response; html: string; codeId?: string }> {
    const response = await this.fetch('/code', form({ cpf }));
    const html = await response.text();
    const codeId = /name="code_id" value="([^"]+)"/.exec(html)?.[1];
    return { response, html, ...(codeId ? { codeId } : {}) };
  }

  /** Types a code; a right one keeps the session cookie the answer sets. */
  async verify(codeId: string, code: string): Promise<Response> {
    const response = await this.fetch('/verify', form({ code_id: codeId, code }));
    const session = response.headers.get('set-cookie')?.split(';')[0];
    if (session) this.cookie = session;
    return response;
  }

  /** Asks for a code for `cpf`, reads it from where it goes, types it: a verified session. */
  async identify(cpf: string, source: CodeSource): Promise<void> {
    const asked = new Date(Date.now() - 1000);
    const { response, html, codeId } = await this.requestCode(cpf);
    if (!codeId) throw new Error(`no code sent (${response.status}):\n${html.slice(0, 500)}`);
    const verified = await this.verify(codeId, await codeFrom(source, asked));
    if (verified.status !== 303) throw new Error(`code refused: ${verified.status}`);
  }

  /** Signs as the session's signer. */
  sign(agree = true): Promise<Response> {
    return this.fetch('', form(agree ? { agree: 'yes' } : {}));
  }
}
