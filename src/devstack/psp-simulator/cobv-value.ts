import { daysBetween } from '../../domain/business-date.js';
import { Decimal, fromCentavos, toCentavos } from '../../domain/money.js';
import { centavosOf, valorOf } from '../../psp/valor.js';
import type { CobV } from './state.js';

/**
 * What a charge with a due date (`cobv`) asks of a payer on a day, as the API Pix describes its
 * `valor` (CobVValor) and a Pix's `componentesValor`: the original amount up to the due date; after
 * it, plus the `multa` (modality 1: a fixed amount; 2: a percentage of the original, once) and the
 * `juros` on calendar days (1: an amount a day; 2: a percentage a day; 3: a percentage a month,
 * pro rata die over 30 days; 4: a percentage a year over 365), simple, each rounded half-even to
 * the centavo. The business-day modalities (5 to 8), `abatimento` and `desconto` are not
 * simulated: a cobv naming them is refused (`unsupported`), as a PSP refuses a product not
 * contracted.
 */
export interface CobvValue {
  /** Centavos. */
  total: number;
  componentes: {
    original: { valor: string };
    multa?: { valor: string };
    juros?: { valor: string };
  };
}

const percent = (text: string) => new Decimal(text).div(100);

/** Why the simulator does not take this cobv's `valor`, if it does not. */
export function unsupported(valor: Partial<CobV['valor']>): string | undefined {
  if (valor.abatimento) return 'abatimento';
  if (valor.desconto) return 'desconto';
  const juros = valor.juros?.modalidade;
  if (juros !== undefined && juros > 4) return `juros modalidade ${juros} (dias úteis)`;
  return undefined;
}

/** What the cobv asks on `date` (YYYY-MM-DD, São Paulo). */
export function cobvValueOn(record: CobV, date: string): CobvValue {
  const original = centavosOf(record.valor.original);
  const due = record.calendario.dataDeVencimento ?? date;
  const daysLate = Math.max(0, daysBetween(due, date));
  const componentes: CobvValue['componentes'] = { original: { valor: record.valor.original } };
  if (daysLate === 0) return { total: original, componentes };
  const base = fromCentavos(original);
  let total = original;
  const { multa, juros } = record.valor;
  if (multa) {
    const value =
      Number(multa.modalidade) === 1
        ? centavosOf(multa.valorPerc)
        : toCentavos(base.times(percent(multa.valorPerc)));
    total += value;
    componentes.multa = { valor: valorOf(value) };
  }
  if (juros) {
    const rate = percent(juros.valorPerc);
    const byModality: Record<number, () => Decimal> = {
      1: () => fromCentavos(centavosOf(juros.valorPerc)).times(daysLate),
      2: () => base.times(rate).times(daysLate),
      3: () => base.times(rate).times(daysLate).div(30),
      4: () => base.times(rate).times(daysLate).div(365),
    };
    const accrue = byModality[Number(juros.modalidade)];
    if (!accrue) throw new Error(`juros modalidade ${juros.modalidade} is not simulated`);
    const value = toCentavos(accrue());
    total += value;
    componentes.juros = { valor: valorOf(value) };
  }
  return { total, componentes };
}
