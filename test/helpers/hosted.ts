import { request as httpRequest } from 'node:http';
import { codeIn, waitForMessage } from './mailbox.js';

/** The sandbox's published code (contract §15); production codes come from the mailbox. */
export const SANDBOX_CODE = '000000';

const codeIdIn = (html: string): string => {
  const id = /name="code_id" value="([^"]+)"/.exec(html)?.[1];
  if (!id) throw new Error(`no code form in the page:\n${html.slice(0, 500)}`);
  return id;
};

/** The CSRF token a hosted page's forms carry (src/http/routes/hosted/forms.ts). */
export const csrfIn = (html: string): string | undefined =>
  /name="csrf" value="([^"]+)"/.exec(html)?.[1];

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

/**
 * `fetch` from a given loopback address (`from`, e.g. 127.0.0.2: another host as the API sees
 * it), answering a standard Response; without `from`, the global fetch. Redirects not followed.
 */
export async function fetchFrom(
  url: string,
  init: RequestInit = {},
  from?: string,
): Promise<Response> {
  if (!from) return fetch(url, { ...init, redirect: 'manual' });
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: init.method ?? 'GET',
        localAddress: from,
        headers: init.headers as Record<string, string> | undefined,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers))
            for (const one of [value ?? []].flat()) headers.append(name, one);
          const status = response.statusCode ?? 0;
          const body = [204, 304].includes(status) ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, headers }));
        });
      },
    );
    request.on('error', reject);
    request.end(typeof init.body === 'string' ? init.body : undefined);
  });
}

/** Where the code comes from: the sandbox's fixed one, or the e-mail sent to this address. */
export type CodeSource = { sandbox: true } | { email: string };

/** The code of the newest message about `subject` (the signing page's mail leaves after its answer). */
async function codeFrom(source: CodeSource, after: Date, subject: string): Promise<string> {
  if ('sandbox' in source) return SANDBOX_CODE;
  return codeIn(await waitForMessage(source.email, { after, subjectIncludes: subject }));
}

/**
 * A browser on a hosted link: it keeps the cookies it is given (the form cookie, a session) and
 * the CSRF token of the last page it was shown, and sends them as a browser's forms do.
 */
export class HostedBrowser {
  private readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page shown (undefined before the first). */
  csrf: string | undefined;
  readonly path: string;

  constructor(
    protected readonly baseUrl: string,
    linkUrl: string,
    protected readonly userAgent = 'test-signer',
    /** The loopback address requests come from (the API's ctx.ip). */
    readonly from?: string,
  ) {
    this.path = new URL(linkUrl).pathname;
  }

  /** A request to the link (`suffix` after its path), with this browser's cookies. */
  async fetch(suffix = '', init: RequestInit = {}): Promise<Response> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetchFrom(
      `${this.baseUrl}${this.path}${suffix}`,
      {
        ...init,
        headers: {
          ...(init.headers as Record<string, string> | undefined),
          'User-Agent': this.userAgent,
          ...(cookie ? { Cookie: cookie } : {}),
        },
      },
      this.from,
    );
    for (const set of response.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const [name, ...value] = pair!.split('=');
      this.cookies.set(name!, value.join('='));
    }
    if (response.headers.get('content-type')?.startsWith('text/html')) {
      const csrf = csrfIn(await response.clone().text());
      if (csrf) this.csrf = csrf;
    }
    return response;
  }

  /** Posts a form as the page's own form would: with the page's CSRF token (opening it first). */
  async post(suffix: string, fields: Record<string, string>): Promise<Response> {
    if (!this.csrf) await this.fetch();
    return this.fetch(suffix, form({ csrf: this.csrf ?? '', ...fields }));
  }
}

/**
 * What a customer does on the hosted biometrics page: opens it, asks for a code, types it, and
 * the capture is recorded. Returns the last answer (200 and "Captura recebida" when it worked).
 */
export async function completeBiometricsCapture(
  baseUrl: string,
  sessionUrl: string,
  source: CodeSource = { sandbox: true },
): Promise<Response> {
  const browser = new HostedBrowser(baseUrl, sessionUrl);
  const asked = new Date(Date.now() - 1000);
  const sent = await browser.post('/code', {});
  if (sent.status !== 200) return sent;
  const codeId = codeIdIn(await sent.text());
  return browser.post('', {
    code_id: codeId,
    code: await codeFrom(source, asked, 'verificação biométrica'),
  });
}

/** A signer's browser on the signing link: a code opens its session, which then signs. */
export class SigningBrowser extends HostedBrowser {
  /** Asks for a code for `cpf`; returns the answer and the code form's id when one was shown. */
  async requestCode(cpf: string): Promise<{ response: Response; html: string; codeId?: string }> {
    const response = await this.post('/code', { cpf });
    const html = await response.text();
    const codeId = /name="code_id" value="([^"]+)"/.exec(html)?.[1];
    return { response, html, ...(codeId ? { codeId } : {}) };
  }

  /** Types a code; a right one gives the browser its session cookie. */
  verify(codeId: string, code: string): Promise<Response> {
    return this.post('/verify', { code_id: codeId, code });
  }

  /** Asks for a code for `cpf`, reads it from where it goes, types it: a verified session. */
  async identify(cpf: string, source: CodeSource): Promise<void> {
    const asked = new Date(Date.now() - 1000);
    const { response, html, codeId } = await this.requestCode(cpf);
    if (!codeId) throw new Error(`no code sent (${response.status}):\n${html.slice(0, 500)}`);
    const verified = await this.verify(codeId, await codeFrom(source, asked, 'assinar'));
    if (verified.status !== 303) throw new Error(`code refused: ${verified.status}`);
  }

  /** Signs as the session's signer. */
  sign(agree = true): Promise<Response> {
    return this.post('', agree ? { agree: 'yes' } : {});
  }
}
