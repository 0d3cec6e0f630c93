import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contractFindings } from '../../src/db/expand-contract.js';
import { migrationsFolder } from '../../src/db/migrate.js';

/**
 * Migrations written before the rule (docs/operations/rollback.md): 0023 widened four amounts to
 * bigint in place, which the release before it read as well. From 0030 on, the rule holds.
 */
const BEFORE_THE_RULE = 30;

describe('expand then contract: migrations the previous release can run against', () => {
  it('flags what breaks the previous release, and passes what only adds', () => {
    const rules = (sql: string) => contractFindings(sql).map((finding) => finding.rule);
    expect(rules('ALTER TABLE "loans" DROP COLUMN "note";')).toEqual(['drops a column']);
    expect(rules('DROP TABLE "old_things";')).toEqual(['drops a table']);
    expect(rules('ALTER TABLE "loans" RENAME COLUMN "a" TO "b";')).toEqual(['renames']);
    expect(rules('ALTER TABLE "loans" ALTER COLUMN "amount" SET DATA TYPE numeric;')).toEqual([
      "changes a column's type",
    ]);
    expect(rules('ALTER TABLE "loans" ALTER COLUMN "kind" SET NOT NULL;')).toEqual([
      'sets NOT NULL on a column without a default',
    ]);
    expect(
      rules(
        `ALTER TABLE "loans" ALTER COLUMN "kind" SET DEFAULT 'x';--> statement-breakpoint\nALTER TABLE "loans" ALTER COLUMN "kind" SET NOT NULL;`,
      ),
    ).toEqual([]);
    expect(rules('ALTER TABLE "loans" ADD COLUMN "kind" text NOT NULL;')).toEqual([
      'adds a NOT NULL column without a default',
    ]);
    expect(rules(`ALTER TABLE "loans" ADD COLUMN "kind" text DEFAULT 'x' NOT NULL;`)).toEqual([]);
    expect(rules('ALTER TABLE "loans" ADD COLUMN "note" text;')).toEqual([]);
    expect(rules('CREATE TABLE "t" ("id" text PRIMARY KEY NOT NULL);')).toEqual([]);
    // A trigger function's body is not a schema change.
    expect(
      rules(
        `CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RAISE 'no; DROP TABLE x'; END $$ LANGUAGE plpgsql;`,
      ),
    ).toEqual([]);
    // Marked as a contract step, a destructive migration passes.
    expect(
      rules(
        '-- contract step: 0031 stopped reading "note"\nALTER TABLE "loans" DROP COLUMN "note";',
      ),
    ).toEqual([]);
  });

  it('holds for every migration since the rule, unless marked a contract step', async () => {
    const files = (await readdir(migrationsFolder)).filter((name) => name.endsWith('.sql')).sort();
    expect(files.length).toBeGreaterThanOrEqual(BEFORE_THE_RULE);
    const offending: string[] = [];
    for (const file of files) {
      if (Number(file.slice(0, 4)) < BEFORE_THE_RULE) continue;
      const findings = contractFindings(await readFile(join(migrationsFolder, file), 'utf8'));
      offending.push(
        ...findings.map((finding) => `${file}: ${finding.rule}: ${finding.statement}`),
      );
    }
    expect(offending).toEqual([]);
  });

  it('would have flagged the migrations written before it (the rule reads what it should)', async () => {
    const sql = await readFile(join(migrationsFolder, '0023_unidentified_receipts.sql'), 'utf8');
    expect(contractFindings(sql).map((finding) => finding.rule)).toContain(
      "changes a column's type",
    );
  });
});
