/**
 * Masks a CPF or CNPJ for logs, keeping only what support needs to match a record by eye:
 * CPF `12345678909` → `***.456.789-**`; CNPJ `12ABC34501DE35` → `**.ABC.345/01**-**`.
 */
export function maskTaxId(value: unknown): string {
  if (typeof value !== 'string') return '[masked]';
  const raw = value.toUpperCase().replace(/[^0-9A-Z]/g, '');
  if (raw.length === 11) return `***.${raw.slice(3, 6)}.${raw.slice(6, 9)}-**`;
  if (raw.length === 14) return `**.${raw.slice(2, 5)}.${raw.slice(5, 8)}/${raw.slice(8, 10)}**-**`;
  return '[masked]';
}

/**
 * Masks an e-mail address for a page or a record of where a code went: `maria.silva@example.com`
 * → `m***@e***.com`. The first letters and the top-level domain let a person recognise their own
 * address; nobody else learns it.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const tld = dot > 0 ? domain.slice(dot) : '';
  return `${local[0]}***@${domain[0] ?? ''}***${tld}`;
}
