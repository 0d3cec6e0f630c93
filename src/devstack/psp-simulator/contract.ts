import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { parse } from 'yaml';
import { applyBcbErrata } from '../../psp/bcb/errata.js';
import { projectRoot } from '../../project-root.js';

/**
 * The documents the simulator answers by: Banco Central's API Pix (with its errata) and our
 * payout port. openapi-backend (ajv) routes each request to the document's operation and checks
 * the request before a handler sees it and the answer before it is sent.
 */
export interface Contract {
  api: OpenAPIBackend;
  name: 'bcb' | 'payouts';
}

type Paths = Record<string, Record<string, { operationId?: string } | undefined>>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

async function load(name: Contract['name'], file: string, fix: <T>(d: T) => T): Promise<Contract> {
  const definition = fix(parse(readFileSync(join(projectRoot, file), 'utf8')) as { paths: Paths });
  // The API Pix names no operation; the simulator names each `<method> <path>`.
  for (const [path, item] of Object.entries(definition.paths))
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) operation.operationId = `${method} ${path}`;
    }
  const api = new OpenAPIBackend({
    definition: definition as never,
    strict: false,
    validate: true,
    // Validators are compiled when an operation is first called: the simulator uses 11 of the
    // API Pix's 60, and compiling all of them took 2 of its 2.5 s start. It also skips checking
    // the document against the OpenAPI schema, which the BCB publishes, not we.
    quick: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, strict: false },
    customizeAjv: (ajv) => {
      // ajv-formats is CommonJS: its plugin is the module's `default`.
      addFormats.default(ajv);
      return ajv;
    },
  });
  await api.init();
  return { api, name };
}

export async function loadContracts(): Promise<Contract[]> {
  return Promise.all([
    load('bcb', 'src/psp/bcb/openapi.yaml', applyBcbErrata),
    load('payouts', 'src/psp/payouts/openapi.yaml', (d) => d),
  ]);
}

/**
 * What the simulator sends unasked, checked like an answer before it goes: the API Pix's
 * notification of Pix received (the `listaPix` callback of `PUT /webhook/{chave}`, body
 * `WebhookPixBody`) and the payout port's `PayoutNotification`.
 */
export function notificationValidators(contracts: Contract[]): {
  pix: ValidateFunction;
  payouts: ValidateFunction;
} {
  type Document = {
    components: {
      requestBodies?: Record<string, { content: Record<string, { schema: object }> }>;
      schemas?: Record<string, object>;
    };
  };
  const document = (name: Contract['name']) => {
    const contract = contracts.find((candidate) => candidate.name === name);
    if (!contract) throw new Error(`the ${name} document did not load`);
    return contract.api.definition as Document;
  };
  const pix =
    document('bcb').components.requestBodies?.WebhookPixBody?.content['application/json']?.schema;
  const payouts = document('payouts').components.schemas?.PayoutNotification;
  if (!pix || !payouts) throw new Error('a notification schema is missing from its document');
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats.default(ajv);
  return { pix: ajv.compile(pix), payouts: ajv.compile(payouts) };
}

export interface Violation {
  razao: string;
  propriedade: string;
}

/** ajv's errors as the API Pix's `violacoes`: what is wrong, and where (a dotted path). */
export function violations(
  errors: readonly { instancePath: string; message?: string | undefined }[] | null | undefined,
): Violation[] {
  return (errors ?? []).map((error) => ({
    razao: error.message ?? 'invalid',
    propriedade: error.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(request)',
  }));
}

export type { Operation };
