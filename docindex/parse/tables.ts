import { countTokens, countTokensWithin } from './tokens.js';

/**
 * Large Markdown tables, taken out of their section's text and cut into runs of rows.
 *
 * A reference table (error codes, options, parameter types) is a list of entries, each a fact of its own, like the
 * declarations of a source file. Left in its section, a 20-row table is one long snippet: its rows share one length
 * norm in keyword search, and an embedding model reads only the first few hundred tokens of it. So a GFM table
 * (a header row, a delimiter row, then at least two rows) of more than `maxTokens` tokens leaves the section's text
 * and becomes runs of whole rows of at most `maxTokens` tokens each, every run under the table's own header, so that
 * each one still says what its columns are. A smaller table stays in the text, where the prose around it explains it.
 */
export interface SectionTables {
  /** The section's lines without the large tables. */
  text: string[];
  /** Each run of rows, header first, as snippet content. */
  runs: string[];
}

/**
 * Tokens of a run, header included: a few rows. Chosen on the tuning corpora among 256, 128 and one row a snippet
 * (docs/ranking.md, section 2).
 */
export const TABLE_RUN_TOKENS = 128;

const DELIMITER_CELL = /^:?-+:?$/;

/** A header row and the delimiter row under it, with as many cells (a lone `---` is a rule, not a table). */
function startsTable(header: string, delimiter: string): boolean {
  if (!header.includes('|') || !delimiter.includes('|')) return false;
  const marks = cells(delimiter);
  return marks.every((c) => DELIMITER_CELL.test(c.trim())) && cells(header).length === marks.length;
}

/** A row's cells, without the optional pipes at its ends; `\|` is a pipe inside a cell. */
function cells(row: string): string[] {
  const t = row.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '');
  return t.split(/(?<!\\)\|/);
}

export function splitLargeTables(lines: readonly string[], maxTokens = TABLE_RUN_TOKENS): SectionTables {
  const text: string[] = [];
  const runs: string[] = [];
  let i = 0;
  while (i < lines.length) {
    if (i + 1 < lines.length && startsTable(lines[i]!, lines[i + 1]!)) {
      let end = i + 2;
      while (end < lines.length && lines[end]!.includes('|')) end++; // every next line with a pipe is a row (a blank one has none)
      const table = lines.slice(i, end);
      if (end - i > 3 && countTokensWithin(table.join('\n'), maxTokens) === false) {
        runs.push(...rowRuns(table, maxTokens));
        // One blank line stays where the table was, between the text before it and after it.
        const blankBefore = !text.length || text[text.length - 1] === '';
        const blankAfter = end >= lines.length || lines[end] === '';
        if (!blankBefore && !blankAfter) text.push('');
        i = blankBefore && blankAfter ? end + 1 : end;
        continue;
      }
    }
    text.push(lines[i]!);
    i++;
  }
  return { text, runs };
}

/** Greedy runs of whole rows under the header; a row too long for any run still gets one of its own. */
function rowRuns(table: readonly string[], maxTokens: number): string[] {
  const header = `${table[0]}\n${table[1]}`;
  const budget = maxTokens - countTokens(header) - 1;
  const runs: string[] = [];
  let rows: string[] = [];
  let used = 0;
  for (const row of table.slice(2)) {
    const cost = countTokens(row) + 1;
    if (rows.length && used + cost > budget) {
      runs.push([header, ...rows].join('\n'));
      rows = [];
      used = 0;
    }
    rows.push(row);
    used += cost;
  }
  if (rows.length) runs.push([header, ...rows].join('\n'));
  return runs;
}
