/** Runs a step after every step asked for before it, and answers with that step's result. */
export type Serialized = <T>(step: () => Promise<T>) => Promise<T>;

/**
 * A workflow's steps, one at a time in the order they were asked for, so each sees the state the
 * previous one left: handlers and timers never interleave their activities. A step that fails
 * fails its own caller only; the steps after it still run.
 */
export function stepQueue(): Serialized {
  let queue: Promise<unknown> = Promise.resolve();
  return <T>(step: () => Promise<T>): Promise<T> => {
    const run = queue.then(step);
    queue = run.catch(() => undefined);
    return run;
  };
}
