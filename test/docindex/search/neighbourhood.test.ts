import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetWithSections } from '../../../docindex/search/neighbourhood.js';
import { type SnippetRow, SnippetRows } from '../../../docindex/search/snippet-rows.js';
import { startTestStack, type TestStack } from '../../support/stack.js';

/** Widening results to their section (docindex/search/neighbourhood.ts), on snippets written straight into the database. */
let stack: TestStack;
const LIB = '/neighbours/lib';
const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);
const row = (ordinal: number): SnippetRow & { score: number } => ({
  id: `s${ordinal}`,
  documentId: 'doc',
  type: 'info',
  title: 'Notes',
  content: `line ${ordinal}`,
  language: null,
  breadcrumb: null,
  tokenCount: 3,
  versionId: null,
  filePath: 'NOTES.txt',
  ordinal,
  score: 1,
});

beforeAll(async () => {
  stack = await startTestStack({ api: false, queues: [] });
  await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, created_at, updated_at) values (?, 'N', 'local', '/n', 'indexed', 0, 5, now(), now())`, [LIB]);
  await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('doc', ?, 'NOTES.txt', 'x', now())`, [LIB]);
  // One long file whose snippets all share one (empty) breadcrumb, as a plain text file's do.
  for (let i = 0; i < 60; i++) {
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values (?, 'doc', ?, null, 'info', 'Notes', ?, null, null, 3, ?, now())`,
      [`s${i}`, LIB, `line ${i}`, i],
    );
  }
});

afterAll(async () => {
  await stack?.stop();
});

describe('widening results to their section', () => {
  it('takes only consecutive snippets: two hits far apart in a file are not joined across the gap', async () => {
    const [first, second] = await budgetWithSections(stack.orm.em.fork(), [row(10), row(40)], 10_000);
    const lines = (text: string) => text.split('\n\n').map((l) => Number(l.replace('line ', '')));
    for (const [hit, at] of [[first!, 10], [second!, 40]] as const) {
      const got = lines(hit.content);
      expect(got).toContain(at);
      // Each result is a run of consecutive lines around its own hit, within the reach of the widening.
      expect(got).toEqual(Array.from({ length: got.length }, (_, i) => got[0]! + i));
      expect(Math.max(...got.map((n) => Math.abs(n - at)))).toBeLessThanOrEqual(8);
    }
  });

  it('widens a result asked for again from the rows kept, the same as from PostgreSQL, until the stamp moves', async () => {
    const em = stack.orm.em.fork();
    const plain = await budgetWithSections(em, [row(20), row(23)], 10_000);
    const rows = new SnippetRows(1 << 20);
    const kept = (stamp: string) => ({ rows, stampOf: () => stamp });
    expect(await budgetWithSections(em, [row(20), row(23)], 10_000, kept('1'))).toEqual(plain);
    // Each hit's neighbours are kept once, and their rows with them (the two hits share theirs).
    expect(rows.neighbours('s20', '1')).toEqual(Array.from({ length: 17 }, (_, i) => `s${12 + i}`));
    expect(rows.get('s28', '1')?.filePath).toBe('NOTES.txt');
    await sql(`update snippet set content = 'changed' where id = 's21'`);
    try {
      // Asked again under the same stamp: nothing is read, so the change behind the index's back is not seen.
      expect(await budgetWithSections(em, [row(20), row(23)], 10_000, kept('1'))).toEqual(plain);
      // Another stamp (a re-index) reads them again.
      const fresh = await budgetWithSections(em, [row(20), row(23)], 10_000, kept('2'));
      expect(fresh[0]!.content).toContain('changed');
    } finally {
      await sql(`update snippet set content = 'line 21' where id = 's21'`);
    }
  });
});
