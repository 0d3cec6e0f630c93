import { describe, expect, it } from 'vitest';
import {
  ERASED,
  identityHashes,
  redactDisbursementAccount,
  redactPersonalData,
} from '../../src/domain/customers/erasure.js';
import { parseKeyRing } from '../../src/domain/key-ring.js';

const ring = (text: string) => parseKeyRing(text).ring!;
const OLD = 'old:an-old-data-encryption-key-of-32-bytes!';
const NEW = 'new:the-new-data-encryption-key-of-32-bytes';

describe('redactPersonalData', () => {
  it('replaces personal fields at any depth and keeps what says what happened', () => {
    const loanEvent = {
      id: 'ln_1',
      customer_id: 'cust_1',
      status: 'finished',
      principal_amount: 100_000,
      external_id: null,
      signers: [{ name: 'Maria Silva', cpf: '52998224725', signed_at: '2026-11-01T10:00:00Z' }],
      disbursement_account: { type: 'pix', pix_key: 'maria@example.com', pix_key_type: 'email' },
      nested: { deeper: { email: 'maria@example.com', phone: '+5511987654321', kept: 'yes' } },
    };
    expect(redactPersonalData(loanEvent)).toEqual({
      id: 'ln_1',
      customer_id: 'cust_1',
      status: 'finished',
      principal_amount: 100_000,
      external_id: null,
      signers: [{ name: ERASED, cpf: ERASED, signed_at: '2026-11-01T10:00:00Z' }],
      disbursement_account: { type: 'pix', pix_key: ERASED, pix_key_type: 'email' },
      nested: { deeper: { email: ERASED, phone: ERASED, kept: 'yes' } },
    });
  });

  it('replaces free text about the person — a denial, a review message, a partner’s reason — keeping codes', () => {
    expect(
      redactPersonalData({
        status: 'denied',
        reason: 'Documento de Maria adulterado',
        kyc: [{ type: 'selfie', status: 'pending_resubmission', message: 'Não é a Maria' }],
        loans: [
          { id: 'ln_1', cancellation_reason: 'signature_deadline' },
          { id: 'ln_2', cancellation_reason: 'A fiadora Maria desistiu' },
          { id: 'ln_3', cancellation_reason: null, error: { code: 'x', message: 'Maria' } },
        ],
      }),
    ).toEqual({
      status: 'denied',
      reason: ERASED,
      kyc: [{ type: 'selfie', status: 'pending_resubmission', message: ERASED }],
      loans: [
        { id: 'ln_1', cancellation_reason: 'signature_deadline' },
        { id: 'ln_2', cancellation_reason: ERASED },
        { id: 'ln_3', cancellation_reason: null, error: { code: 'x', message: ERASED } },
      ],
    });
  });

  it('replaces a personal field holding an object by null, leaving nothing of it', () => {
    expect(redactPersonalData({ name: { first: 'Maria' }, id: 'cust_1' })).toEqual({
      name: null,
      id: 'cust_1',
    });
  });
});

describe('redactDisbursementAccount', () => {
  it('keeps the kind and the bank, not the account or the key', () => {
    expect(
      redactDisbursementAccount({
        type: 'bank_account',
        bank_code: '341',
        branch: '1234',
        account_number: '56789-0',
        account_type: 'checking',
      }),
    ).toEqual({
      type: 'bank_account',
      bank_code: '341',
      branch: ERASED,
      account_number: ERASED,
      account_type: 'checking',
    });
  });
});

describe('identityHashes', () => {
  const identity = { cpf: '52998224725', cnpj: null };

  it('is keyed: the same identity hashes alike under one key, differently under another', () => {
    const [first] = identityHashes(ring(OLD), identity);
    expect(identityHashes(ring(OLD), { ...identity })).toEqual([first]);
    expect(first).toMatch(/^old:[0-9a-f]{64}$/);
    expect(first).not.toContain(identity.cpf);
    const [underNew] = identityHashes(ring(NEW), identity);
    expect(underNew!.slice(4)).not.toBe(first!.slice(4));
  });

  it('tells the pair (cpf, cnpj) apart from the cpf alone', () => {
    const [alone] = identityHashes(ring(OLD), identity);
    const [withCompany] = identityHashes(ring(OLD), { ...identity, cnpj: '11222333000181' });
    expect(withCompany).not.toBe(alone);
  });

  it('after a rotation, still finds what the previous key hashed while it is listed', () => {
    const [stored] = identityHashes(ring(OLD), identity);
    const rotated = identityHashes(ring(`${NEW},${OLD}`), identity);
    expect(rotated).toHaveLength(2);
    expect(rotated).toContain(stored);
    expect(identityHashes(ring(NEW), identity)).not.toContain(stored);
  });
});
