import { afterAll, describe, expect, it } from 'vitest';
import { addDays } from '../../src/domain/business-date.js';
import { simulateLoan, type SimulationInput } from '../../src/domain/credit/simulation.js';
import {
  createSimulationPool,
  INLINE_MAX_INSTALLMENTS,
} from '../../src/domain/credit/simulation-pool.js';
import { decreeIof as iof } from '../helpers/iof.js';

const input = (installments: number): SimulationInput => ({
  requestedAmount: 5_000_000,
  installments,
  monthlyInterestRate: '0.0199',
  releaseDate: '2026-12-01',
  firstDueDate: addDays('2026-12-01', 30),
  borrower: 'individual',
  iof,
});

const pool = createSimulationPool({ threads: 1 });
afterAll(() => pool.close());

describe('the simulation pool', () => {
  it('runs a long simulation on its thread, to the same centavo as on the event loop', async () => {
    const figures = await pool.simulate(input(360));
    expect(figures).toEqual(simulateLoan(input(360)));
    expect(figures.schedule).toHaveLength(360);
    expect(pool.offloaded()).toBe(1);
  });

  it('keeps short ones on the event loop, where a thread would cost more than the math', async () => {
    const before = pool.offloaded();
    expect(await pool.simulate(input(INLINE_MAX_INSTALLMENTS))).toEqual(
      simulateLoan(input(INLINE_MAX_INSTALLMENTS)),
    );
    expect(await pool.simulate(input(INLINE_MAX_INSTALLMENTS + 1))).toEqual(
      simulateLoan(input(INLINE_MAX_INSTALLMENTS + 1)),
    );
    expect(pool.offloaded()).toBe(before + 1);
  });

  it('runs everything inline with no threads', async () => {
    const inline = createSimulationPool({ threads: 0 });
    expect(await inline.simulate(input(360))).toEqual(simulateLoan(input(360)));
    expect(inline.offloaded()).toBe(0);
    await inline.close();
  });
});
