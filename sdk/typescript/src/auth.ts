import { apiErrorOf } from './errors.js';
import type { TokenSource } from './transport.js';
import type { Token } from './types.js';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * OAuth 2.0 client credentials (`POST /v3/auth/token`): one token cached and shared by concurrent
 * requests, renewed `renewBeforeMs` before it expires (the server's tokens last an hour), or at
 * once when the API refused it.
 */
export class ClientCredentialsTokens implements TokenSource {
  private current: { token: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly options: ClientCredentials & {
      baseUrl: string;
      /** The retrying fetch (a 429 or 503 of the token endpoint is retried like any other). */
      fetch: (request: Request) => Promise<Response>;
      now: () => number;
      renewBeforeMs: number;
    },
  ) {}

  token(): Promise<string> {
    const current = this.current;
    if (current && this.options.now() < current.expiresAt - this.options.renewBeforeMs)
      return Promise.resolve(current.token);
    this.pending ??= this.exchange().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private async exchange(): Promise<string> {
    const requestedAt = this.options.now();
    const response = await this.options.fetch(
      new Request(`${this.options.baseUrl}/v3/auth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: this.options.clientId,
          client_secret: this.options.clientSecret,
        }),
      }),
    );
    if (!response.ok) throw await apiErrorOf(response);
    const issued = (await response.json()) as Token;
    // Counted from when it was asked for: never later than the server's own expiry.
    this.current = {
      token: issued.access_token,
      expiresAt: requestedAt + issued.expires_in * 1000,
    };
    return issued.access_token;
  }
}
