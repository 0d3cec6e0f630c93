import { randomUUID } from 'node:crypto';
import { CNPJ } from 'validation-br/cnpj';
import { CPF } from 'validation-br/cpf';
import type { Client } from './partners.js';

/** A valid CPF; `firstDigit` picks the sandbox credit outcome (9 = rejected). */
export function fakeCpf(options: { notStartingWith9?: boolean } = {}): string {
  for (;;) {
    const cpf = CPF.fake().value;
    if (!options.notStartingWith9 || !cpf.startsWith('9')) return cpf;
  }
}

export const fakeCnpj = (): string => CNPJ.fake().value;

export interface CustomerBody {
  id: string;
  status: string;
  cpf: string;
  cnpj: string | null;
  name: string;
  email: string;
  external_id: string | null;
  kyc: {
    kind: string;
    type: string;
    status: string;
    message: string | null;
    uploaded_at: string | null;
  }[];
  updated_at: string;
}

export async function registerCustomer(api: Client, overrides: Record<string, unknown> = {}) {
  const response = await api('/v3/customers', {
    method: 'POST',
    body: {
      cpf: fakeCpf({ notStartingWith9: true }),
      name: 'Maria Silva',
      // Each customer's own address: tests read the codes sent to it from the run's mailbox.
      email: `maria.${randomUUID().slice(0, 8)}@example.com`,
      phone: '+5511987654321',
      ...overrides,
    },
  });
  if (response.status !== 201)
    throw new Error(`registration answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as CustomerBody;
}

/** Minimal files of each accepted kind, recognised by their first bytes. */
export const files = {
  pdf: () =>
    Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(64, 0x20), Buffer.from('\n%%EOF\n')]),
  png: () => Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'),
  jpeg: () => Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex'),
  exe: () => Buffer.concat([Buffer.from('MZ'), Buffer.alloc(126, 0)]),
};

export function upload(
  api: Client,
  customerId: string,
  type: string | undefined,
  file: { bytes: Buffer; name: string; mime?: string } | undefined,
  path = 'documents',
  headers: Record<string, string> = {},
) {
  const form = new FormData();
  if (type !== undefined) form.set('type', type);
  if (file)
    form.set(
      'file',
      new Blob([file.bytes], { type: file.mime ?? 'application/octet-stream' }),
      file.name,
    );
  return api(`/v3/customers/${customerId}/${path}`, { method: 'POST', form, headers });
}
