/**
 * `npm run sandbox:cpf [-- --count N] [-- --prefix DIGITS]`: fresh valid CPFs for sandbox test data,
 * one a line, each with what the sandbox will do with it. A CPF is one customer per partner and
 * environment, so each run of a script needs a new one; the prefix picks the outcome (a first
 * digit of 9: no offer; digits 2–5: the limit, rate and term — README, "Using the API").
 */
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { describeOutcome, sandboxCpf, sandboxOutcome } from '../domain/customers/sandbox-cpfs.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '5' },
    prefix: { type: 'string', default: '' },
  },
});
const count = Number(values.count);
if (!Number.isInteger(count) || count < 1 || count > 1000) {
  process.stderr.write('--count: a whole number from 1 to 1000\n');
  process.exit(2);
}
if (!/^\d{0,9}$/.test(values.prefix)) {
  process.stderr.write('--prefix: up to nine digits (the first nine of the CPF)\n');
  process.exit(2);
}
for (let made = 0; made < count; made++) {
  const cpf = sandboxCpf(values.prefix, (below) => randomInt(below));
  process.stdout.write(`${cpf}  ${describeOutcome(sandboxOutcome(cpf))}\n`);
}
