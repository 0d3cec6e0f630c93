import { isCNPJ, isCPF } from 'validation-br';

/** CPF: 11 digits, punctuation accepted, check digits verified; stored as digits. */
export function normalizeCpf(input: string): string | undefined {
  const digits = input.replace(/[.\-\s]/g, '');
  return /^\d{11}$/.test(digits) && isCPF(digits) ? digits : undefined;
}

/**
 * CNPJ: 14 characters, numeric or the alphanumeric format in force since July 2026 (check digits
 * by the ASCII−48 rule); punctuation accepted; stored uppercase without punctuation.
 */
export function normalizeCnpj(input: string): string | undefined {
  const compact = input.replace(/[.\-/\s]/g, '').toUpperCase();
  return /^[0-9A-Z]{12}\d{2}$/.test(compact) && isCNPJ(compact) ? compact : undefined;
}
