import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextParams, retrieveContext, type RetrievalDeps } from '../../../docindex/search/context.js';
import { retrieveAcrossLibraries } from '../../../docindex/search/multi-library.js';
import { closeSearch } from '../../../docindex/search/search.js';
import { loadSnippets, type SnippetRow, SnippetRows } from '../../../docindex/search/snippet-rows.js';
import { createLogger } from '../../../core/log.js';
import { startTestStack, type TestStack } from '../../support/stack.js';

/**
 * Snippet rows kept in the process (docindex/search/snippet-rows.ts): a question asked again reads no snippet from
 * PostgreSQL, a re-index (a new stamp) reads them afresh, and the rows kept stay within their bytes.
 */
const row = (id: string, content = 'x'.repeat(100)): SnippetRow => ({
  id, type: 'info', title: 'T', content, language: null, breadcrumb: null, tokenCount: 1, versionId: null, filePath: 'a.md', documentId: 'd', ordinal: 0,
});

describe('SnippetRows', () => {
  it('keeps rows by id and stamp, drops the least recently shown beyond its bytes, and refuses one too big', () => {
    const rows = new SnippetRows(1500); // three rows of this size
    for (const id of ['a', 'b', 'c', 'd']) rows.set(row(id), '1');
    expect(rows.bytes).toBeLessThanOrEqual(1500);
    expect(rows.get('a', '1')).toBeUndefined(); // the oldest went first
    expect(rows.get('b', '1')?.id).toBe('b');
    expect(rows.get('b', '2')).toBeUndefined(); // another stamp is another index
    rows.set(row('e'), '1'); // b was shown last, so c goes
    expect(rows.get('c', '1')).toBeUndefined();
    expect(rows.get('b', '1')?.id).toBe('b');
    rows.set(row('huge', 'y'.repeat(5000)), '1');
    expect(rows.get('huge', '1')).toBeUndefined();
    expect(rows.get('b', '1')?.id).toBe('b'); // and it evicted nothing
    rows.clear();
    expect(rows.bytes).toBe(0);
  });
});

describe('snippet rows kept across answers', () => {
  let stack: TestStack;
  const LIB = '/kept/rows';
  const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);
  const deps = (): RetrievalDeps => ({ config: stack.config, orm: stack.orm, log: createLogger('error') });
  const ask = async () => (await retrieveContext(deps(), contextParams({ libraryId: LIB, query: 'reconnect', searchMode: 'keyword' }))).snippets;

  beforeAll(async () => {
    stack = await startTestStack({ api: false, queues: [] });
    await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, last_indexed_at, created_at, updated_at) values (?, 'Kept', 'local', '/kept', 'indexed', 2, 5, now(), now(), now())`, [LIB]);
    await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('kd', ?, 'docs/client.md', 'x', now())`, [LIB]);
    for (const [id, title, content, ordinal] of [['k1', 'Reconnecting', 'The client will reconnect after a dropped connection.', 0], ['k2', 'Backoff', 'Each reconnect waits twice as long.', 1]]) {
      await sql(
        `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
         values (?, 'kd', ?, null, 'info', ?, ?, null, 'Client', 10, ?, now())`,
        [id, LIB, title, content, ordinal],
      );
    }
  });

  afterAll(async () => {
    await closeSearch();
    await stack?.stop();
  });

  it('answers a question asked again from the rows kept, and reads them again once the library is re-indexed', async () => {
    const first = await ask();
    expect(first.map((s) => s.title).sort()).toEqual(['Backoff', 'Reconnecting']);
    // Changed behind the index's back (no re-index): the kept rows answer, so nothing was read from PostgreSQL.
    await sql(`update snippet set title = 'Changed' where id = 'k1'`);
    expect((await ask()).map((s) => s.title).sort()).toEqual(['Backoff', 'Reconnecting']);
    // A re-index moves the scope's stamp: its rows are read again.
    await sql(`update library set last_indexed_at = last_indexed_at + interval '1 second' where id = ?`, [LIB]);
    expect((await ask()).map((s) => s.title).sort()).toEqual(['Backoff', 'Changed']);
  });

  it('keeps the rows of an answer across libraries under each library\'s own stamp', async () => {
    const OTHER = '/kept/other';
    await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, last_indexed_at, created_at, updated_at) values (?, 'Other', 'local', '/other', 'indexed', 1, 5, now(), now(), now())`, [OTHER]);
    await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('od', ?, 'docs/retry.md', 'x', now())`, [OTHER]);
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values ('o1', 'od', ?, null, 'info', 'Retry', 'Retry and reconnect after a delay.', null, 'Retry', 10, 0, now())`,
      [OTHER],
    );
    const across = async () =>
      (await retrieveAcrossLibraries(deps(), contextParams({ libraryId: `${LIB},${OTHER}`, query: 'reconnect', searchMode: 'keyword' }))).snippets
        .map((s) => `${s.libraryId}: ${s.title}`)
        .sort();
    const first = await across();
    expect(first).toEqual([`${OTHER}: Retry`, `${LIB}: Backoff`, `${LIB}: Changed`]);
    // Changed behind both indexes' backs: the kept rows answer.
    await sql(`update snippet set title = title || ' (edited)' where id in ('k2', 'o1')`);
    expect(await across()).toEqual(first);
    // Re-indexing one library reads its rows again, and only its own.
    await sql(`update library set last_indexed_at = last_indexed_at + interval '1 second' where id = ?`, [OTHER]);
    expect(await across()).toEqual([`${OTHER}: Retry (edited)`, `${LIB}: Backoff`, `${LIB}: Changed`]);
    await sql(`update snippet set title = 'Backoff' where id = 'k2'`);
  });

  it('keeps nothing when SEARCH_SNIPPET_CACHE_MB is 0, and skips ids no longer stored', async () => {
    const em = stack.orm.em.fork();
    const ranked = [{ id: 'k2', score: 2 }, { id: 'gone', score: 1.5 }, { id: 'k1', score: 1 }];
    const rows = new SnippetRows(1 << 20);
    const kept = { rows, stampOf: (id: string) => (id === 'k1' ? undefined : 's') };
    const loaded = await loadSnippets(em, ranked, kept);
    expect(loaded.map((s) => [s.id, s.score])).toEqual([['k2', 2], ['k1', 1]]);
    expect(rows.get('k2', 's')?.filePath).toBe('docs/client.md');
    expect(rows.get('gone', 's')).toBeUndefined();
    expect(rows.get('k1', 's')).toBeUndefined(); // no stamp, not kept
    await sql(`update snippet set title = 'Off' where id = 'k1'`);
    const off = await retrieveContext({ ...deps(), config: { ...stack.config, searchSnippetCacheBytes: 0 } }, contextParams({ libraryId: LIB, query: 'reconnect', searchMode: 'keyword' }));
    expect(off.snippets.map((s) => s.title).sort()).toEqual(['Backoff', 'Off']);
  });
});
