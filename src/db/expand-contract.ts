/**
 * The expand/contract rule of docs/operations/rollback.md, as a check over a migration's SQL: a
 * statement the previous release cannot run against (it drops, renames or retypes what that
 * release reads or writes, or makes it write a value it does not know) belongs in a contract
 * step, a migration shipped a release after the code stopped using what it removes, marked with
 * a line `-- contract step: <why the previous release no longer needs it>`.
 */
export const CONTRACT_MARKER = /^--\s*contract step:\s*\S/m;

export interface Finding {
  statement: string;
  rule: string;
}

const RULES: { rule: string; test: (statement: string, file: string) => boolean }[] = [
  { rule: 'drops a table', test: (s) => /\bDROP\s+TABLE\b/i.test(s) },
  { rule: 'drops a column', test: (s) => /\bDROP\s+COLUMN\b/i.test(s) },
  { rule: 'renames', test: (s) => /\bRENAME\b/i.test(s) },
  {
    rule: "changes a column's type",
    test: (s) => /\bALTER\s+COLUMN\s+("[^"]+"|\w+)\s+(SET\s+DATA\s+)?TYPE\b/i.test(s),
  },
  { rule: 'alters a type', test: (s) => /\bALTER\s+TYPE\b/i.test(s) },
  {
    // The previous release inserts rows without the column: it needs a default.
    rule: 'sets NOT NULL on a column without a default',
    test: (s, file) => {
      const match = /\bALTER\s+COLUMN\s+("[^"]+"|\w+)\s+SET\s+NOT\s+NULL\b/i.exec(s);
      if (!match) return false;
      const column = match[1]!.replace(/^"|"$/g, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return !new RegExp(`ALTER\\s+COLUMN\\s+"?${column}"?\\s+SET\\s+DEFAULT\\b`, 'i').test(file);
    },
  },
  {
    rule: 'adds a NOT NULL column without a default',
    test: (s) =>
      /\bADD\s+COLUMN\b/i.test(s) && /\bNOT\s+NULL\b/i.test(s) && !/\bDEFAULT\b/i.test(s),
  },
];

/** Statements of a drizzle migration (split at its breakpoints and semicolons, comments dropped). */
export function statementsOf(sql: string): string[] {
  return sql
    .split(/-->\s*statement-breakpoint/)
    .flatMap((chunk) => splitOutsideBodies(chunk))
    .map((statement) =>
      statement
        .split('\n')
        .filter((line) => !line.trim().startsWith('--'))
        .join('\n')
        .trim(),
    )
    .filter(Boolean);
}

/** Splits at `;`, except inside a `$$ … $$` body (functions, DO blocks). */
function splitOutsideBodies(chunk: string): string[] {
  const parts: string[] = [];
  let current = '';
  let inBody = false;
  for (let i = 0; i < chunk.length; i++) {
    if (chunk.startsWith('$$', i)) {
      inBody = !inBody;
      current += '$$';
      i++;
      continue;
    }
    if (chunk[i] === ';' && !inBody) {
      parts.push(current);
      current = '';
    } else current += chunk[i];
  }
  parts.push(current);
  return parts;
}

/** What in this migration breaks the previous release, unless it is marked a contract step. */
export function contractFindings(sql: string): Finding[] {
  if (CONTRACT_MARKER.test(sql)) return [];
  const findings: Finding[] = [];
  for (const statement of statementsOf(sql)) {
    // A function's or trigger's body is code, not a change of the schema the old release reads.
    if (/^\s*(CREATE|DO)\b[\s\S]*\$\$/i.test(statement)) continue;
    for (const { rule, test } of RULES)
      if (test(statement, sql)) findings.push({ statement: statement.slice(0, 200), rule });
  }
  return findings;
}
