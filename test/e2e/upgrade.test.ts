import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { z } from 'zod';
import { loanAccountBalances, reconcileLedger } from '../../src/db/queries/ledger.js';
import type { loanTransactionSchema } from '../../src/http/routes/loans/schema.js';
import { projectRoot } from '../../src/project-root.js';
import { workflowIds } from '../../src/temporal/workflow-ids.js';
import { activeLoan, type LoanBody, type OfferBody } from '../helpers/credit.js';
import { client, createPartner, tokenFor, type Client } from '../helpers/partners.js';
import { eventually, OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';
import { spawnApiProcess, type ApiProcess } from '../helpers/api-process.js';
import { spawnWorkerProcess } from '../helpers/worker-process.js';

/**
 * A deploy with work in flight: the previous release's API and worker (its tree extracted from
 * git, its workflow sources bundled by its own worker process), on the schema the current
 * migrations made — as in a rolling deploy, where migrations run first and the old release keeps
 * serving (expand, then contract: docs/operations/rollback.md) — take a customer to active and a
 * loan to its first payment; they stop as a deploy stops them, and the current API and worker take
 * over the same task queue, replay those runs on the new code and finish them.
 */

type TransactionBody = z.infer<typeof loanTransactionSchema>;
type EventBody = { id: string; type: string; data: { id: string; status?: string } };

const run = promisify(execFile);

/**
 * What both workers and the API are given: a short renewal, reviews and disbursements by hand, and
 * the payload codec in its upgrade mode (README, "Workflow payloads"): the previous release has no
 * codec, so while its worker runs nothing is encrypted, and everything encrypted is still read.
 */
const env = {
  TEMPORAL_PAYLOAD_ENCRYPTION: 'decode-only',
  SANDBOX_REVIEW_DELAY: '1h',
  SANDBOX_DISBURSEMENT_DELAY: '1h',
  OFFER_RENEWAL_DELAY: '2s',
};

/** The commit named in test/upgrade/previous-release (comment lines aside). */
async function previousRelease(): Promise<string> {
  const file = join(projectRoot, 'test/upgrade/previous-release');
  const lines = (await readFile(file, 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  if (lines.length !== 1 || !/^[0-9a-f]{40}$/.test(lines[0]!))
    throw new Error(
      `${file} must name one commit by its full SHA (found ${JSON.stringify(lines)})`,
    );
  return lines[0]!;
}

/**
 * The previous release's tree in a folder of its own, read from git without touching the
 * repository's work tree, index or HEAD (no checkout, no worktree), with this checkout's
 * node_modules linked in (the dependencies a release pins rarely change; a release that changes
 * them is tested by its own CI).
 */
async function extractRelease(sha: string): Promise<string> {
  try {
    await run('git', ['cat-file', '-e', `${sha}^{commit}`], { cwd: projectRoot });
  } catch {
    throw new Error(
      `The upgrade test needs the git history: commit ${sha} (the previous release, named in ` +
        'test/upgrade/previous-release) is not in this clone. A shallow clone? Run ' +
        '`git fetch --unshallow` (CI: check out with fetch-depth 0).',
    );
  }
  const dir = await mkdtemp(join(tmpdir(), `embedded-credit-${sha.slice(0, 7)}-`));
  await run('git', ['archive', '--format=tar', `--output=${join(dir, 'release.tar')}`, sha], {
    cwd: projectRoot,
  });
  await run('tar', ['-xf', 'release.tar'], { cwd: dir });
  await rm(join(dir, 'release.tar'));
  await symlink(join(projectRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

let releaseDir: string | undefined;
let stack: TestStack;
let api: Client;
/** The partner's calls while the previous release serves them. */
let oldApi: Client;
let oldApiProcess: ApiProcess | undefined;
let oldWorker: ChildProcess | undefined;
let newWorker: Awaited<ReturnType<TestStack['startWorker']>> | undefined;

beforeAll(async () => {
  releaseDir = await extractRelease(await previousRelease());
  // No worker of the stack's own: the task queue is served by the old worker, then the new one.
  stack = await startStack({ worker: false, env });
  const token = await tokenFor(stack, (await createPartner(stack)).credentials.sandbox);
  api = client(stack, token);
  [oldWorker, oldApiProcess] = await Promise.all([
    spawnWorkerProcess(stack, {
      root: releaseDir,
      // The owner's role, as a release that migrated at start needed (its migrations are all
      // applied: it changes nothing).
      env: { ...env, SMTP_URL: inject('smtpUrl'), DATABASE_URL: inject('ownerDatabaseUrl') },
    }),
    spawnApiProcess(stack, { root: releaseDir, env }),
  ]);
  oldApi = client({ baseUrl: oldApiProcess.baseUrl } as TestStack, token);
});
afterAll(async () => {
  if (oldWorker && oldWorker.exitCode === null && oldWorker.signalCode === null)
    oldWorker.kill('SIGKILL');
  await oldApiProcess?.stop();
  await newWorker?.stop();
  await stack?.stop();
  if (releaseDir) await rm(releaseDir, { recursive: true, force: true });
});

/** Who completed each workflow task of a run, with which build, and the patches it recorded. */
async function workflowTasks(handle: WorkflowHandle) {
  const events = (await handle.fetchHistory()).events ?? [];
  const completed: { identity: string; buildId: string }[] = [];
  /** Each patch marker, with the worker whose task recorded it (`patched()` outside replay). */
  const patches: { id: string; by: string }[] = [];
  for (const event of events) {
    const task = event.workflowTaskCompletedEventAttributes;
    if (task)
      completed.push({
        identity: task.identity ?? '',
        buildId:
          task.deploymentVersion?.buildId ||
          task.workerVersion?.buildId ||
          task.binaryChecksum ||
          '',
      });
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_patch') {
      const data = marker.details?.['patch-data']?.payloads?.[0]?.data;
      patches.push({
        id: data ? (JSON.parse(Buffer.from(data).toString()) as { id: string }).id : '?',
        // A marker is a command of the task completed just before it.
        by: completed.at(-1)?.identity ?? '',
      });
    }
  }
  const last = events.at(-1);
  return {
    completed,
    patches,
    closedBy: last?.workflowExecutionCompletedEventAttributes
      ? 'completed'
      : last?.workflowExecutionContinuedAsNewEventAttributes
        ? 'continued as new'
        : 'other',
  };
}

/** Why a run's workflow tasks failed (a nondeterminism error names the command that differs). */
async function taskFailures(handle: WorkflowHandle): Promise<string[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return [
    ...new Set(
      events
        .map((event) => event.workflowTaskFailedEventAttributes?.failure?.message)
        .filter((message): message is string => !!message),
    ),
  ];
}

/** Every `patched('…')` id a tree's workflow code names. */
async function patchesIn(root: string): Promise<Set<string>> {
  const ids = new Set<string>();
  const dir = join(root, 'workflows');
  for (const file of await readdir(dir, { recursive: true })) {
    if (!file.endsWith('.ts')) continue;
    const text = await readFile(join(dir, file), 'utf8');
    for (const match of text.matchAll(/(?:patched|deprecatePatch)\(\s*['"]([^'"]+)['"]/g))
      ids.add(match[1]!);
  }
  return ids;
}

/** The run's tasks: some by the old worker, then the rest by the new one, never interleaved. */
function expectOldThenNew(
  tasks: Awaited<ReturnType<typeof workflowTasks>>,
  identities: { old: string; new: string },
) {
  const switchAt = tasks.completed.findIndex((task) => task.identity !== identities.old);
  expect(switchAt).toBeGreaterThan(0);
  expect(tasks.completed.slice(0, switchAt).every((t) => t.identity === identities.old)).toBe(true);
  expect(tasks.completed.slice(switchAt).every((t) => t.identity === identities.new)).toBe(true);
  return { oldTasks: switchAt, newTasks: tasks.completed.length - switchAt };
}

describe('an upgrade with a loan and an offer in flight', () => {
  it('the previous release starts them, the current worker finishes them: events, ledger, the next offer', async () => {
    const started = Date.now();
    const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
    const identities = {
      old: `${oldWorker!.pid}@${hostname()}`,
      new: `${process.pid}@${hostname()}`,
    };
    const pay = async (loanId: string, through: Client = api): Promise<LoanBody> => {
      const response = await through(`/v3/sandbox/loans/${loanId}/payments`, {
        method: 'POST',
        body: {},
      });
      if (response.status !== 200) {
        // The likely cause after the switch: the new code could not replay the old history.
        const failures = await taskFailures(
          stack.temporal.workflow.getHandle(workflowIds.loan(loanId)),
        );
        throw new Error(
          `payment: ${response.status} ${await response.text()}` +
            (failures.length ? `\nthe loan's workflow tasks failed: ${failures.join('\n')}` : ''),
        );
      }
      return (await response.json()) as LoanBody;
    };

    // The old release: a customer to active (its offers workflow started and run by the old
    // code), a loan of its offer signed and disbursed, one payment.
    const loan = await activeLoan({ baseUrl: oldApiProcess!.baseUrl }, oldApi, {
      opsToken: OPS_TOKEN,
    });
    const offerId = loan.credit_offer_id;
    const customerId = loan.customer_id;
    const firstPayment = await pay(loan.id, oldApi);
    expect(firstPayment).toMatchObject({ status: 'active', paid_installments: 1 });
    // The runs the old worker started, by their run ids: the offers workflow continues as new
    // once it renews, and a run started later would prove nothing.
    const loanRun = (await stack.temporal.workflow.getHandle(workflowIds.loan(loan.id)).describe())
      .runId;
    const offersRun = (
      await stack.temporal.workflow.getHandle(workflowIds.creditOffers(customerId)).describe()
    ).runId;
    const loanHandle = stack.temporal.workflow.getHandle(workflowIds.loan(loan.id), loanRun);
    const offersHandle = stack.temporal.workflow.getHandle(
      workflowIds.creditOffers(customerId),
      offersRun,
    );
    for (const handle of [loanHandle, offersHandle]) {
      const before = await workflowTasks(handle);
      expect(before.completed.length).toBeGreaterThan(0);
      expect(before.completed.every((task) => task.identity === identities.old)).toBe(true);
    }
    const oldDone = elapsed();

    // The deploy: the old worker stops as a deploy stops it (SIGTERM, drained), the new one starts.
    const exited = new Promise<number | null>((resolve) => oldWorker!.once('exit', resolve));
    oldWorker!.kill('SIGTERM');
    expect(await exited).toBe(0);
    await oldApiProcess!.stop();
    expect(oldApiProcess!.child.exitCode).toBe(0);
    newWorker = await stack.startWorker();
    // The old release made the loan active without a reminders workflow (contract §17 came
    // after it): the new worker's housekeeping queues one.
    const reminders = await eventually(
      () =>
        stack.temporal.workflow
          .getHandle(workflowIds.reminders(loan.id))
          .describe()
          .catch(() => undefined),
      'the reminders workflow of a loan the old release made active',
    );
    expect(reminders.type).toBe('remindersWorkflow');

    // The new release pays the loan to the end.
    let current = firstPayment;
    while (current.status === 'active') current = await pay(loan.id);
    expect(current).toMatchObject({
      status: 'finished',
      outstanding_amount: 0,
      paid_installments: loan.installments,
    });
    expect(await loanHandle.result()).toBe('finished');

    // Its events, in the order written.
    const log = (await (await api('/v3/events?order=asc&limit=100')).json()) as {
      data: EventBody[];
    };
    expect(
      log.data
        .filter((e) => e.type.startsWith('loan.') && e.data.id === loan.id)
        .map((e) => e.type),
    ).toEqual([
      'loan.created',
      'loan.signature_received',
      'loan.processing',
      'loan.active',
      ...Array.from({ length: loan.installments }, () => 'loan.payment_received'),
      'loan.finished',
    ]);

    // Its ledger: a disbursement, a payment per row, every principal centavo paid, and the
    // ledger's invariants holding (findings about other test files' loans are theirs).
    const transactions = (
      (await (await api(`/v3/loans/${loan.id}/transactions`)).json()) as {
        data: TransactionBody[];
      }
    ).data;
    expect(transactions.map((t) => t.type)).toEqual([
      'disbursement',
      ...Array.from({ length: loan.installments }, () => 'payment'),
    ]);
    const mine = new Set([loan.id, ...transactions.map((t) => t.id)]);
    const findings = await reconcileLedger(stack.database.db);
    expect(findings.filter((f) => f.subject === null || mine.has(f.subject))).toEqual([]);
    const balances = await loanAccountBalances(stack.database.db, loan.id);
    expect(balances.find((b) => b.account === 'loan_principal')?.balance ?? 0).toBe(0);

    // The offer, as after any repaid loan: it stays accepted (spent), and the offers workflow the
    // old release started renews: a new offer after OFFER_RENEWAL_DELAY, issued by the new code.
    const next = await eventually(async () => {
      const page = (await (
        await api(`/v3/customers/${customerId}/credit-offers?status=available`)
      ).json()) as { data: OfferBody[] };
      return page.data.find((offer) => offer.id !== offerId);
    }, `a new offer for ${customerId}`);
    const spent = (await (await api(`/v3/credit-offers/${offerId}`)).json()) as OfferBody;
    expect(spent).toMatchObject({ id: offerId, status: 'accepted' });
    const offerLog = (await (await api('/v3/events?order=asc&limit=100')).json()) as {
      data: EventBody[];
    };
    expect(
      offerLog.data
        .filter((e) => e.type.startsWith('credit_offer.'))
        .map((e) => [e.type, e.data.id]),
    ).toEqual([
      ['credit_offer.available', offerId],
      ['credit_offer.accepted', offerId],
      ['credit_offer.available', next.id],
    ]);

    // Both runs: tasks completed by the old worker first, then by the new one; no task failed
    // (a replay the new code could not follow fails its task and retries it for ever).
    const loanTasks = await workflowTasks(loanHandle);
    const offersTasks = await workflowTasks(offersHandle);
    expect(await taskFailures(loanHandle)).toEqual([]);
    expect(await taskFailures(offersHandle)).toEqual([]);
    const loanSplit = expectOldThenNew(loanTasks, identities);
    const offersSplit = expectOldThenNew(offersTasks, identities);
    expect(loanTasks.closedBy).toBe('completed');
    // The offers run the old release started ends by renewing: continued as new, by the new code.
    expect(offersTasks.closedBy).toBe('continued as new');
    const renewedHandle = stack.temporal.workflow.getHandle(workflowIds.creditOffers(customerId));
    const renewed = await workflowTasks(renewedHandle);
    expect(await taskFailures(renewedHandle)).toEqual([]);
    expect(renewed.completed.every((task) => task.identity === identities.new)).toBe(true);

    // Where the server records build ids (the SDK's default ends with its bundle's SHA-256), each
    // worker kept one, and the new worker's is this run's bundle (the old one's, the bundle its
    // process made from the release's tree, is not asserted: it names the folder it was made in).
    const currentBundle = createHash('sha256')
      .update(await readFile(inject('workflowBundlePath')))
      .digest('hex');
    for (const [tasks, split] of [
      [loanTasks, loanSplit],
      [offersTasks, offersSplit],
    ] as const) {
      const oldBuilds = new Set(tasks.completed.slice(0, split.oldTasks).map((t) => t.buildId));
      const newBuilds = new Set(tasks.completed.slice(split.oldTasks).map((t) => t.buildId));
      expect(oldBuilds.size).toBe(1);
      expect(newBuilds.size).toBe(1);
      const [newBuild] = newBuilds;
      if (newBuild) expect(newBuild).toContain(currentBundle);
    }
    const builds = [...new Set(loanTasks.completed.map((task) => task.buildId))];

    // The old code, told by its patches: every patch the old worker recorded is one the release's
    // workflows name (none that only the current code knows), and the renewed run, started by the
    // current code, records the current code's.
    const [releasePatches, currentPatches] = await Promise.all([
      patchesIn(releaseDir!),
      patchesIn(projectRoot),
    ]);
    for (const tasks of [loanTasks, offersTasks]) {
      const byOld = tasks.patches.filter((patch) => patch.by === identities.old);
      expect(byOld.filter((patch) => !releasePatches.has(patch.id))).toEqual([]);
    }
    expect(renewed.patches.filter((patch) => !currentPatches.has(patch.id))).toEqual([]);
    const addedSince = [...currentPatches].filter((id) => !releasePatches.has(id));
    const ids = (tasks: { patches: { id: string }[] }) =>
      JSON.stringify(tasks.patches.map((patch) => patch.id));
    // The run's account, for the closing note.
    process.stderr.write(
      `upgrade: old worker ${identities.old} ran up to the first payment (${oldDone}); ` +
        `loan ${loan.id}: ${loanSplit.oldTasks} tasks old, ${loanSplit.newTasks} new; ` +
        `offers ${offersRun}: ${offersSplit.oldTasks} old, ${offersSplit.newTasks} new; ` +
        `builds ${JSON.stringify(builds)}; patches since the release ${JSON.stringify(addedSince)}; ` +
        `recorded: loan ${ids(loanTasks)}, offers ${ids(offersTasks)}, renewed offers ${ids(renewed)}; ` +
        `done in ${elapsed()}\n`,
    );
  }, 240_000);
});
