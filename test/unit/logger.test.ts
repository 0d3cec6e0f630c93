import { describe, expect, it } from 'vitest';
import { maskTaxId } from '../../src/domain/masking.js';
import Koa from 'koa';
import { createHttpMetrics } from '../../src/http/metrics.js';
import { requestContext } from '../../src/http/middleware/request-context.js';
import { createLogger } from '../../src/logger.js';
import { listenOnLoopback } from '../helpers/listen.js';

describe('logs', () => {
  it('never hold secrets or tokens, and show CPF and CNPJ masked, at any depth', () => {
    const lines: string[] = [];
    const logger = createLogger('info', 'test', { write: (line: string) => void lines.push(line) });
    logger.info(
      {
        req: { headers: { authorization: 'Bearer eyJhbGciOi.secret.token' } },
        credential: { client_id: 'cli_0a1b', client_secret: 'sk_do-not-log' },
        access_token: 'eyJhbGciOi.also.secret',
        customer: { cpf: '529.982.247-25', cnpj: '12ABC34501DE35', owner: { cpf: '52998224725' } },
      },
      'something happened',
    );
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    for (const secret of [
      'eyJhbGciOi',
      'sk_do-not-log',
      '529.982.247-25',
      '52998224725',
      '12ABC34501DE35',
    ]) {
      expect(line).not.toContain(secret);
    }
    const entry = JSON.parse(line) as {
      credential: Record<string, string>;
      customer: { cpf: string; cnpj: string; owner: { cpf: string } };
    };
    expect(entry.credential).toEqual({ client_id: 'cli_0a1b', client_secret: '[redacted]' });
    expect(entry.customer).toEqual({
      cpf: '***.982.247-**',
      cnpj: '**.ABC.345/01**-**',
      owner: { cpf: '***.982.247-**' },
    });
  });

  it('masks anything that is not a well-formed tax id entirely', () => {
    expect(maskTaxId('123')).toBe('[masked]');
    expect(maskTaxId(52998224725)).toBe('[masked]');
    expect(maskTaxId(undefined)).toBe('[masked]');
  });

  it('write one access line a request, with its id, and a hosted page’s token masked', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', 'test', { write: (line: string) => void lines.push(line) });
    const app = new Koa();
    app.use(requestContext(logger, createHttpMetrics({ processMetrics: false })));
    app.use((ctx) => void (ctx.status = 204));
    const served = await listenOnLoopback(app);
    try {
      const response = await fetch(`${served.url}hosted/signing/tok_secret123/contract`, {
        headers: { 'X-Request-Id': 'req-from-partner' },
      });
      expect(response.headers.get('x-request-id')).toBe('req-from-partner');
    } finally {
      await served.close();
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('tok_secret123');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      msg: 'request',
      requestId: 'req-from-partner',
      method: 'GET',
      path: '/hosted/signing/[redacted]/contract',
      status: 204,
    });
  });
});
