import { describe, expect, it } from 'vitest';
import { keyedLimiter } from '../../src/limits/keyed-limiter.js';

/** A task that runs until the test lets it finish. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('keyedLimiter', () => {
  it('runs at most `limit` tasks per key, the rest in arrival order; other keys do not wait', async () => {
    const run = keyedLimiter(2);
    const started: string[] = [];
    const gates = Array.from({ length: 5 }, gate);
    const tasks = gates.map((g, n) =>
      run('loan-a', async () => {
        started.push(`a${n}`);
        await g.opened;
        return n;
      }),
    );
    const other = run('loan-b', async () => {
      started.push('b');
      return 'b';
    });
    await expect(other).resolves.toBe('b');
    await Promise.resolve();
    expect(started).toEqual(['a0', 'a1', 'b']);
    gates[1]!.open();
    await tasks[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a0', 'a1', 'b', 'a2']);
    for (const g of gates) g.open();
    await expect(Promise.all(tasks)).resolves.toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual(['a0', 'a1', 'b', 'a2', 'a3', 'a4']);
  });

  it('frees the turn of a task that fails', async () => {
    const run = keyedLimiter(1);
    await expect(run('k', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(run('k', async () => 'next')).resolves.toBe('next');
  });
});
