import { describe, expect, it } from 'vitest';
import { ConfigError, DEVELOPMENT_OPS_TOKEN, loadConfig } from '../../src/config.js';

const base = { DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db', S3_BUCKET: 'documents' };

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      port: 3000,
      publicBaseUrl: 'http://localhost:3000',
      temporal: { address: 'localhost:7233', namespace: 'default', uiPort: 8233, devPort: 7233 },
      embeddedPostgresPort: 5433,
      opsToken: DEVELOPMENT_OPS_TOKEN,
      sandboxReviewDelayMs: 10_000,
      webhookAllowPrivateTargets: false,
    });
  });

  it('reads durations in the ms format', () => {
    const config = loadConfig({ ...base, SANDBOX_REVIEW_DELAY: '2s', OFFER_RENEWAL_DELAY: '1d' });
    expect(config.sandboxReviewDelayMs).toBe(2000);
    expect(config.offerRenewalDelayMs).toBe(86_400_000);
  });

  it('reports every problem at once', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', SANDBOX_REVIEW_DELAY: 'soon', NODE_ENV: 'production' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/^PORT: /m);
    expect(problems).toMatch(/^DATABASE_URL: /m);
    expect(problems).toMatch(/^SANDBOX_REVIEW_DELAY: expected a duration/m);
    expect(problems).toMatch(/^OPS_TOKEN: required in production$/m);
    expect(problems).toMatch(/^TOKEN_SIGNING_KEY: required in production$/m);
    expect(problems).toMatch(/^DATA_ENCRYPTION_KEY: required in production$/m);
    expect(problems).toMatch(/^S3_BUCKET: required with FILE_STORE=s3/m);
    expect((error as ConfigError).problems).toHaveLength(7);
  });

  it('requires an ops token and forbids private webhook targets in production', () => {
    expect(() =>
      loadConfig({ ...base, NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }),
    ).toThrow(
      /OPS_TOKEN: required in production[\s\S]*WEBHOOK_ALLOW_PRIVATE_TARGETS: is for local development only/,
    );
  });
});
