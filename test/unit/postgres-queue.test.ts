import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { projectRoot } from '../../src/project-root.js';

/**
 * postgres.js's internal queue (node_modules/postgres/src/queue.js, not exported), as patched by
 * patches/postgres+3.4.9.patch. The pool moves a busy connection by `shift` then `remove` (a miss)
 * and `push`: unpatched, every such move left a hole at the front of the queue's array, which never
 * shrank while the queue was busy, and `remove` scanned every hole — a pool under sustained load
 * answered 59,000 queries a second at first and 17,000 after 240,000 (docs/architecture.md).
 */
interface Queue<T> {
  readonly length: number;
  push(item: T): T;
  shift(): T | undefined;
  remove(item: T): T | null;
}
const { default: Queue } = (await import(
  pathToFileURL(join(projectRoot, 'node_modules/postgres/src/queue.js')).href
)) as { default: <T>(initial?: T[]) => Queue<T> };

afterEach(() => {
  vi.restoreAllMocks();
});

describe("postgres.js's connection queue (patched)", () => {
  it('is first in, first out, and removes from anywhere', () => {
    const queue = Queue<string>(['a', 'b']);
    queue.push('c');
    queue.push('d');
    expect(queue.remove('c')).toBe('c');
    expect(queue.remove('c')).toBeNull();
    expect(queue.length).toBe(3);
    expect([queue.shift(), queue.shift(), queue.shift()]).toEqual(['a', 'b', 'd']);
    expect(queue.length).toBe(0);
    queue.push('e');
    expect(queue.shift()).toBe('e');
  });

  it('keeps its array bounded, and its searches short, however long it stays busy', () => {
    // Every array `remove` searches: its size, and where the search starts.
    const searched: { size: number; from: number }[] = [];
    const indexOf = Array.prototype.indexOf;
    vi.spyOn(Array.prototype, 'indexOf').mockImplementation(function (
      this: unknown[],
      ...args: [unknown, number?]
    ) {
      searched.push({ size: this.length, from: args[1] ?? 0 });
      return indexOf.apply(this, args);
    });

    const busy = Queue<string>(['first', 'second']);
    for (let query = 0; query < 10_000; query++) {
      // What the pool does with a busy connection that takes one more query.
      const connection = busy.shift()!;
      busy.remove(connection);
      busy.push(connection);
    }
    vi.restoreAllMocks();

    expect(busy.length).toBe(2);
    expect(searched).toHaveLength(10_000);
    // Unpatched: the array reached 10,002 slots, and each search went through all of them.
    expect(Math.max(...searched.map((search) => search.size))).toBeLessThanOrEqual(2_050);
    for (const { size, from } of searched) expect(size - from).toBeLessThanOrEqual(2);
    expect([busy.shift(), busy.shift()].sort()).toEqual(['first', 'second']);
  });
});
