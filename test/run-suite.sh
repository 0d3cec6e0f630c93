#!/bin/sh
# `npm test`: the servers provisioned, then Vitest at normal priority and, beside it at the lowest
# (nice 19), the checks (`npm run check`) and the fuzzer (`npm run fuzz`). On CI's 2 cores Vitest's
# forks leave a third of the CPU idle while they wait on timers and workflows; the checks and the
# fuzzer take that share instead of running first on their own (docs/decisions.md, "The test
# budget"). The run ends with Vitest's closing line, the form CI reads, after everything else.
set -u
npm run -s provision -- --browser || exit
closing=.data/vitest-closing-line
rm -f "$closing"
npx run-p test:beside test:vitest
status=$?
cat "$closing" 2>/dev/null || echo 'vitest: no closing line (Vitest did not finish)'
exit "$status"
