import type { IofRates } from '../../src/domain/credit/simulation.js';

/**
 * The IOF rates of contract §2 (Decreto 6.306/2007 as amended): 0.38 % flat, 0.0082 % a day for
 * individuals and companies, 0.00274 % for an MEI up to R$ 30,000.00 of principal. Spelled out
 * here so the money tests do not take the service's configured defaults as their oracle.
 */
export const decreeIof: IofRates = {
  flat: '0.0038',
  dailyIndividual: '0.000082',
  dailyCompany: '0.000082',
  dailyMei: '0.0000274',
  meiPrincipalLimitAmount: 3_000_000,
};
