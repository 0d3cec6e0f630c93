import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentApp } from '../../src/main/document-app.js';

/**
 * The partner document's prose names operations (`POST /v3/…`): each one it names must be one it
 * documents (issue 42: the signing section sent partners to `…/rotate-secret`, a 404).
 */
let app: ReturnType<typeof documentApp>;
let document: {
  paths: Record<string, Record<string, { operationId?: string; description?: string }>>;
};

beforeAll(() => {
  app = documentApp();
  document = app.partnerDocument() as typeof document;
});
afterAll(async () => {
  await app.dispose();
});

/** A path with each `{parameter}` as one placeholder, to compare templates by shape. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

describe("the partner document's prose", () => {
  it('names only operations it documents', () => {
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${shape(path)}`),
      ),
    );
    const named = [
      ...JSON.stringify(document).matchAll(
        /\b(GET|POST|PATCH|PUT|DELETE) (\/v3\/[\w{}/.-]*\w\}?)/g,
      ),
    ].map((m) => `${m[1]} ${shape(m[2]!)}`);
    expect(named).toContain('POST /v3/webhooks/endpoints/{}/secret/rotate');
    expect(named.filter((operation) => !documented.has(operation))).toEqual([]);
  });

  it('says how the sandbox completes biometrics', () => {
    const operation = document.paths['/v3/customers/{customer_id}/biometrics']!.post!;
    expect(operation.operationId).toBe('createBiometricsSession');
    expect(operation.description).toMatch(/\*\*Sandbox:\*\*/);
    expect(operation.description).toContain('`000000`');
    expect(operation.description).toContain('client.sandbox.captureBiometrics');
  });
});
