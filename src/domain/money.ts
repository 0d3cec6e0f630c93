/**
 * `R$ 1.234,56` from integer centavos, by string work on the digits (no division, no float).
 * Deterministic and free of Node built-ins, so workflows use it for their ops details too.
 */
export function formatBrl(centavos: number): string {
  if (!Number.isSafeInteger(centavos)) throw new RangeError(`not a centavo amount: ${centavos}`);
  const digits = String(Math.abs(centavos)).padStart(3, '0');
  const reais = digits.slice(0, -2).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${centavos < 0 ? '-' : ''}R$ ${reais},${digits.slice(-2)}`;
}
