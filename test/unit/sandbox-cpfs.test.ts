import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  cpfCheckDigits,
  describeOutcome,
  sandboxCpf,
  sandboxOutcome,
} from '../../src/domain/customers/sandbox-cpfs.js';
import { normalizeCpf } from '../../src/domain/customers/tax-ids.js';
import { projectRoot } from '../../src/project-root.js';

const random = (below: number) => randomInt(below);

describe('fresh sandbox cpfs (npm run sandbox:cpf)', () => {
  it('computes the check digits the Receita Federal does', () => {
    // The walkthrough's list, each a CPF the API takes.
    for (const cpf of ['52998224725', '52998000100', '52998123457', '52998791565', '08619849433'])
      expect(`${cpf.slice(0, 9)}${cpfCheckDigits(cpf.slice(0, 9))}`).toBe(cpf);
    expect(() => cpfCheckDigits('5299822')).toThrow(/nine digits/);
  });

  it('makes valid cpfs, new each time, with the outcome their prefix picks', () => {
    const plain = Array.from({ length: 300 }, () => sandboxCpf('', random));
    for (const cpf of plain) {
      expect(normalizeCpf(cpf)).toBe(cpf);
      expect(cpf).not.toMatch(/^9/); // without a prefix, every one gets an offer
      expect(sandboxOutcome(cpf)).toHaveProperty('offer');
    }
    expect(new Set(plain).size).toBe(300);

    // The walkthrough's offer, R$ 34.000,00 at 2,49 % for 3–12 installments, from its prefix.
    const walkthrough = sandboxOutcome('52998224725');
    expect(describeOutcome(walkthrough)).toBe(
      'offer of up to R$ 34.000,00 at 2,49 % a month, 3–12 installments',
    );
    for (let i = 0; i < 20; i++) {
      const cpf = sandboxCpf('52998', random);
      expect(cpf).toMatch(/^52998\d{6}$/);
      expect(normalizeCpf(cpf)).toBe(cpf);
      expect(sandboxOutcome(cpf)).toEqual(walkthrough);
    }
    const rejected = sandboxCpf('9', random);
    expect(describeOutcome(sandboxOutcome(rejected))).toBe(
      'no offer (Sandbox: CPF starting with 9.)',
    );
  });

  it('never gives eleven equal digits, which the API refuses', () => {
    // A source that first draws all ones (11111111111 has valid check digits), then counts up.
    let drawn = 0;
    const ones = (below: number) => (drawn++ < 9 ? 1 : drawn % below);
    const cpf = sandboxCpf('', ones);
    expect(cpf).not.toBe('11111111111');
    expect(normalizeCpf(cpf)).toBe(cpf);
    expect(() => sandboxCpf('111111111', ones)).toThrow(/no valid CPF starts with 111111111/);
    expect(() => sandboxCpf('12345678901', ones)).toThrow(/up to nine digits/);
  });

  it('prints them, one a line, with the outcome', async () => {
    const { stdout } = await promisify(execFile)(
      'npm',
      ['run', '-s', 'sandbox:cpf', '--', '--count', '3', '--prefix', '9'],
      { cwd: projectRoot },
    );
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).toMatch(/^9\d{10} {2}no offer \(Sandbox: CPF starting with 9\.\)$/);
      expect(normalizeCpf(line.slice(0, 11))).toBe(line.slice(0, 11));
    }
  });
});
