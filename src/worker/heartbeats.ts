import type { Context } from '@temporalio/activity';
import type { ActivityInterceptors } from '@temporalio/worker';

/**
 * Heartbeats for every activity scheduled with a heartbeat timeout, sent while it runs: the
 * server then learns within that timeout that an attempt's worker died (SIGKILL, a lost host),
 * and retries it elsewhere, instead of waiting out its start-to-close timeout (workflows/presets.ts).
 * An attempt that is slow but alive keeps heartbeating and runs to its start-to-close timeout as
 * before. The SDK throttles what reaches the server (at most one per 80 % of the timeout).
 * Activities without a heartbeat timeout, local ones among them, are left alone.
 */
export function heartbeatWhileRunning(context: Context): ActivityInterceptors {
  return {
    inbound: {
      async execute(input, next) {
        const timeout = context.info.heartbeatTimeoutMs;
        if (!timeout || context.info.isLocal) return next(input);
        const timer = setInterval(() => context.heartbeat(), Math.max(500, timeout / 4));
        try {
          return await next(input);
        } finally {
          clearInterval(timer);
        }
      },
    },
  };
}
