import { Decimal as DecimalJs } from 'decimal.js';

/**
 * The one decimal setup of the money code: 40 significant digits, half-even. Amounts cross the
 * module edges as integer centavos and become decimals only through `fromCentavos`/`toCentavos`,
 * so no binary float ever holds a fraction of an amount. Import this `Decimal`, not decimal.js's
 * own (20 digits, half-up). Deterministic and free of Node built-ins: workflows import this module.
 */
export const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });
export type Decimal = InstanceType<typeof Decimal>;

/** Integer centavos as a decimal count of centavos, for exact arithmetic. */
export function fromCentavos(centavos: number): Decimal {
  if (!Number.isSafeInteger(centavos)) throw new RangeError(`not a centavo amount: ${centavos}`);
  return new Decimal(centavos);
}

/** A decimal count of centavos, rounded half-even to a whole centavo. */
export function toCentavos(value: Decimal): number {
  const centavos = value.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();
  if (!Number.isSafeInteger(centavos))
    throw new RangeError(`not a centavo amount: ${value.toString()}`);
  return centavos;
}

/** A rate as the API and the contract report it: half-even to 4 decimals (0.2346 = 23.46 %). */
export const reportedRate = (rate: Decimal): number =>
  rate.toDecimalPlaces(4, Decimal.ROUND_HALF_EVEN).toNumber();

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

/**
 * 0.0199 → `1,99 %`. Half-up to the hundredth of a percent, as the contract has always printed
 * it (a rate with more than 4 decimals, such as a configured late-charge rate, can land on a tie).
 */
export const formatRate = (rate: number | string): string =>
  `${new Decimal(rate).times(100).toFixed(2, Decimal.ROUND_HALF_UP).replace('.', ',')} %`;
