/**
 * The V8 heap settings the API and the worker run with, wherever they run: `npm run start:api` and
 * `start:worker` (package.json), the image's command (Dockerfile), docker-compose.yml, `npm run
 * dev` and the benchmarks. test/unit/node-flags.test.ts checks that each of those carries them.
 *
 * Left to its defaults on a machine with this much memory, V8 lets an old generation grow to up
 * to four times what survived its last full collection before collecting again, and lets each
 * semi-space of the young generation reach 16 MB: under 50 connections the API's resident set
 * went from about 125 MB at start to 220–260 MB, mostly garbage not yet collected. A growth of
 * 25 % and 8 MB semi-spaces bring the API's peak to 137–146 MB and the worker's (with its
 * workflow cache of 100) to 274 MB at the same throughput within the run-to-run spread
 * (docs/architecture.md, "Performance"). Neither is a cap: a heap that needs more still gets it.
 */
export const heapFlags = ['--max-semi-space-size=8', '--heap-growing-percent=25'] as const;
