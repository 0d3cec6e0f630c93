/**
 * The API Pix writes amounts as `valor`: reais with exactly two decimals ("123.45", pattern
 * `\d{1,10}\.\d{2}`). We keep integer centavos; these convert at the edge on the digits, never
 * through a float.
 */
const VALOR = /^(\d{1,10})\.(\d{2})$/;

export function valorOf(centavos: number): string {
  if (!Number.isSafeInteger(centavos) || centavos < 0)
    throw new RangeError(`not an amount in centavos: ${centavos}`);
  const reais = Math.trunc(centavos / 100);
  const text = `${reais}.${String(centavos % 100).padStart(2, '0')}`;
  if (!VALOR.test(text)) throw new RangeError(`too large for a Pix valor: ${centavos} centavos`);
  return text;
}

export function centavosOf(valor: string): number {
  const match = VALOR.exec(valor);
  if (!match) throw new RangeError(`not a Pix valor (reais with two decimals): "${valor}"`);
  return Number(match[1]) * 100 + Number(match[2]);
}
