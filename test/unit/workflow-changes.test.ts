import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/project-root.js';

/**
 * The release discipline of workflow code, checked over git (docs/decisions.md, "Recorded
 * histories"). Every commit since BASELINE that changes a file under `workflows/` must, in that
 * same commit, do at least one of:
 *
 * - add a recorded history, a new file `test/histories/<workflow>/<case>.json`
 *   (`RECORD_HISTORIES=1`, test/helpers/histories.ts), which the replay test then replays;
 * - add a line calling `patched('…')` or `deprecatePatch('…')` in its `workflows/` diff, for a
 *   patch new to `workflows/` (a call moved with the code around it names nothing new);
 * - say why replay cannot change, in a trailer of its message: `Replay-safe: <reason>` (a
 *   comment, a type, a rename of a local: nothing a run's commands depend on).
 *
 * And no commit since BASELINE changes, renames or removes a recorded history: histories are
 * only ever added (a new recording of a case is a new file).
 *
 * Merge commits are not judged (their parents' commits are), nor is the working tree: a change
 * is judged once committed, in CI as on a laptop, since a trailer only exists in a commit.
 * Checking needs the history back to BASELINE: a shallow clone fails here, saying so.
 */

/**
 * Where checking starts: the last commit before the one that introduced this test (every commit
 * after it is judged, that one first). Older commits are not: db4ea97, for one, already changed
 * workflows with named patches before this rule was written down.
 */
const BASELINE = '4bd612454af1690057c8856ab717dbd1ca67beae';

/**
 * Commits since BASELINE that broke the rule and were answered afterwards, once shared (a history
 * of the path recorded, a patch added, in a later commit), each with that answer. A commit not yet
 * shared is amended instead.
 */
const WAIVED: Record<string, string> = {};

const git = (...args: string[]): string =>
  execFileSync('git', args, {
    cwd: projectRoot,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** Whether `git` answers for `args` (a commit that is there, a repository at all). */
const gitSucceeds = (...args: string[]): boolean => {
  try {
    git(...args);
    return true;
  } catch {
    return false;
  }
};

const HISTORY = /^test\/histories\/[^/]+\/[^/]+\.json$/;
const PATCH_CALL = /\b(patched|deprecatePatch)\(\s*(['"`])([^'"`]+)\2/g;

/** What a commit did, as far as the rule cares. */
export interface CommitChanges {
  sha: string;
  subject: string;
  /** Paths under `workflows/` the commit added, modified, renamed or deleted. */
  workflowFiles: string[];
  /** New files under `test/histories/`. */
  historiesAdded: string[];
  /** Histories the commit changed, renamed or removed (`M path`, `D path`, `R old -> new`). */
  historiesTouched: string[];
  /**
   * `patched`/`deprecatePatch` calls on lines the commit added under `workflows/`, each one its
   * parent's `workflows/` did not make already.
   */
  patchesNamed: string[];
  /** The values of its `Replay-safe:` trailers. */
  replaySafe: string[];
}

/** Why a commit breaks the rule; none when it keeps it. */
export function judge(commit: CommitChanges): string[] {
  const problems: string[] = [];
  if (
    commit.workflowFiles.length > 0 &&
    commit.historiesAdded.length === 0 &&
    commit.patchesNamed.length === 0 &&
    !commit.replaySafe.some((reason) => reason.trim() !== '')
  )
    problems.push(
      `changes ${commit.workflowFiles.join(', ')} but adds no history under test/histories/, ` +
        `names no patched('…')/deprecatePatch('…') and has no "Replay-safe: <reason>" trailer`,
    );
  const touched = commit.historiesTouched;
  if (touched.length > 0)
    problems.push(
      `changes recorded histories (${touched.slice(0, 5).join(', ')}` +
        `${touched.length > 5 ? ` and ${touched.length - 5} more` : ''}): histories are only ` +
        'ever added; record a new file instead',
    );
  return problems;
}

/** Reads what `sha` changed against its first parent. */
export function changesOf(sha: string): CommitChanges {
  const subject = git('log', '-1', '--format=%s', sha).trim();
  const workflowFiles: string[] = [];
  const historiesAdded: string[] = [];
  const historiesTouched: string[] = [];
  // `-z`: paths exactly as stored, whatever characters they hold.
  const fields = git('diff-tree', '-r', '-M', '--no-commit-id', '--name-status', '-z', sha)
    .split('\0')
    .filter((field) => field !== '');
  for (let i = 0; i < fields.length;) {
    const status = fields[i++]!;
    const paths = /^[RC]/.test(status) ? [fields[i++]!, fields[i++]!] : [fields[i++]!];
    for (const path of paths) if (path.startsWith('workflows/')) workflowFiles.push(path);
    const histories = paths.filter((path) => path.startsWith('test/histories/'));
    if (histories.length === 0) continue;
    if (status === 'A' && HISTORY.test(paths[0]!)) historiesAdded.push(paths[0]!);
    else if (status.startsWith('C')) {
      if (HISTORY.test(paths[1]!)) historiesAdded.push(paths[1]!); // a copy adds the new path
    } else historiesTouched.push(`${status[0]} ${paths.join(' -> ')}`);
  }
  const calls = (text: string) =>
    [...text.matchAll(PATCH_CALL)].map((match) => `${match[1]}('${match[3]}')`);
  const patchesNamed: string[] = [];
  if (workflowFiles.length > 0) {
    const before = new Set(calls(parentWorkflowSource(sha)));
    const added = git('show', '--format=', '--unified=0', '--no-color', sha, '--', 'workflows/')
      .split('\n')
      .filter((line) => line.startsWith('+') && !line.startsWith('+++'));
    patchesNamed.push(...calls(added.join('\n')).filter((call) => !before.has(call)));
  }
  const replaySafe = git(
    'log',
    '-1',
    '--format=%(trailers:key=Replay-safe,valueonly,separator=%x00)',
    sha,
  )
    .split('\0')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  return {
    sha,
    subject,
    workflowFiles: [...new Set(workflowFiles)],
    historiesAdded,
    historiesTouched,
    patchesNamed: [...new Set(patchesNamed)],
    replaySafe,
  };
}

/** The lines of the parent's `workflows/` that call a patch function (none for a root commit). */
function parentWorkflowSource(sha: string): string {
  try {
    return git('grep', '-h', '-E', '(patched|deprecatePatch)\\(', `${sha}^`, '--', 'workflows/');
  } catch {
    return ''; // no match (git grep exits 1), or no parent
  }
}

const FULL_HISTORY =
  `the baseline commit ${BASELINE.slice(0, 12)} of the workflow-change check is not in this ` +
  'clone: CI needs the full git history (actions/checkout with fetch-depth: 0, or ' +
  '`git fetch --unshallow`) to check every workflow change since it';

describe('workflow changes since the baseline (docs/decisions.md, "Recorded histories")', () => {
  it('every commit changing workflows/ adds a history, names a patch or says why it is replay-safe; none rewrites a history', () => {
    // Fails, never skips: a check that quietly passes without its history checks nothing.
    if (!gitSucceeds('rev-parse', '--git-dir')) throw new Error(`not a git clone: ${FULL_HISTORY}`);
    if (!gitSucceeds('cat-file', '-e', `${BASELINE}^{commit}`)) {
      const shallow = git('rev-parse', '--is-shallow-repository').trim() === 'true';
      throw new Error(`${shallow ? 'a shallow clone' : 'a clone without it'}: ${FULL_HISTORY}`);
    }
    const commits = git('rev-list', '--no-merges', '--reverse', `${BASELINE}..HEAD`)
      .split('\n')
      .filter((sha) => sha !== '');
    const failures = commits
      .filter((sha) => !Object.keys(WAIVED).some((waived) => sha.startsWith(waived)))
      .flatMap((sha) => {
        const changes = changesOf(sha);
        const subject =
          changes.subject.length > 72 ? `${changes.subject.slice(0, 71)}…` : changes.subject;
        return judge(changes).map((problem) => `${sha.slice(0, 12)} "${subject}": ${problem}`);
      });
    if (failures.length > 0)
      throw new Error(
        `${failures.length} problem(s) in ${commits.length} commit(s) since ${BASELINE.slice(0, 12)}:\n` +
          failures.map((failure) => `  - ${failure}`).join('\n') +
          '\nRecord a history of the changed path (RECORD_HISTORIES=1 npx vitest run <test>), ' +
          "guard the change with patched('…'), or, for a change no run can notice, amend the " +
          'commit with a "Replay-safe: <reason>" trailer. A commit already shared is answered by ' +
          'a later one and listed in WAIVED here (docs/decisions.md, "Recorded histories").',
      );
  });

  it('judges commits from before the baseline as it should (the rule itself)', () => {
    if (!gitSucceeds('cat-file', '-e', `${BASELINE}^{commit}`)) throw new Error(FULL_HISTORY);
    // db4ea97 changed the loan, offers and clock workflows, each behind a named patch.
    const bounded = changesOf('db4ea97');
    expect(bounded.patchesNamed).toEqual(
      expect.arrayContaining([
        "patched('clock-rounds-continue-as-new')",
        "patched('offer-waits-bounded')",
        "patched('offer-moves-from-records')",
        "patched('loan-history-limit')",
      ]),
    );
    expect(judge(bounded)).toEqual([]);
    // 5790119 split the loan workflow into files: its existing patch calls moved, none was new.
    const split = changesOf('5790119');
    expect(split.workflowFiles.length).toBeGreaterThan(1);
    expect(split.patchesNamed).toEqual([]);
    expect(judge(split)).toEqual([expect.stringContaining('names no patched')]);
    // 2dfad90 changed a workflow's comment only: today it would need its Replay-safe trailer.
    expect(judge(changesOf('2dfad90'))).toHaveLength(1);
    // 84ae379 moved the histories (renames, under the old rule) and touched no workflow.
    const moved = changesOf('84ae379');
    expect(moved.workflowFiles).toEqual([]);
    expect(moved.historiesTouched.length).toBeGreaterThan(0);
    expect(judge(moved)).toEqual([expect.stringContaining('histories are only ever added')]);
    // 4bd6124 added histories only.
    const recorded = changesOf('4bd6124');
    expect(recorded.historiesAdded.length).toBeGreaterThan(60);
    expect(judge(recorded)).toEqual([]);
  });

  it('asks for a history, a patch or a reason, and one is enough', () => {
    const change: CommitChanges = {
      sha: 'f'.repeat(40),
      subject: 'a change',
      workflowFiles: ['workflows/loan/workflow.ts'],
      historiesAdded: [],
      historiesTouched: [],
      patchesNamed: [],
      replaySafe: [],
    };
    expect(judge(change)).toEqual([expect.stringContaining('workflows/loan/workflow.ts')]);
    expect(judge({ ...change, historiesAdded: ['test/histories/loan/a.json'] })).toEqual([]);
    expect(judge({ ...change, patchesNamed: ["patched('x')"] })).toEqual([]);
    expect(judge({ ...change, replaySafe: ['a comment only'] })).toEqual([]);
    expect(judge({ ...change, replaySafe: [' '] })).toHaveLength(1);
    expect(judge({ ...change, workflowFiles: [] })).toEqual([]);
    expect(
      judge({ ...change, workflowFiles: [], historiesTouched: ['M test/histories/loan/a.json'] }),
    ).toEqual([expect.stringContaining('only ever added')]);
  });
});
