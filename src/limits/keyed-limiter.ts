/**
 * At most `limit` tasks at a time per key, the rest waiting their turn in arrival order; a key
 * with nothing running or waiting holds no memory. In-process only: it spares a shared resource
 * (a workflow's Updates in flight) the load one process would put on it, not a global lock.
 */
export function keyedLimiter(limit: number) {
  const queues = new Map<string, { running: number; waiting: (() => void)[] }>();
  return async function run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let queue = queues.get(key);
    if (!queue) queues.set(key, (queue = { running: 0, waiting: [] }));
    if (queue.running >= limit) await new Promise<void>((turn) => queue.waiting.push(turn));
    queue.running += 1;
    try {
      return await task();
    } finally {
      queue.running -= 1;
      const next = queue.waiting.shift();
      if (next) next();
      else if (queue.running === 0) queues.delete(key);
    }
  };
}
