import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Orm } from '../../db/orm.js';
import { openDatabase } from '../../runtime/database.js';
import { createTestDatabase } from '../support/stack.js';

/**
 * An existing install: a document indexed before Migration20261207000000_document_stats, then that migration. The
 * document stays, with no stat: the next re-index reads its file (docindex/pipeline.ts, `readSelected`).
 */
let orm: Orm;
const sql = (q: string, params: unknown[] = []) => orm.em.fork().execute(q, params);

beforeAll(async () => {
  orm = await openDatabase(await createTestDatabase('m'));
  await orm.getMigrator().up({ to: 'Migration20261206000000_vector_packs' });
  await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, created_at, updated_at) values ('/a/b', 'B', 'local', '/b', 'indexed', 1, 5, now(), now())`);
  await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('d', '/a/b', 'README.md', 'x', now())`);
}, 120_000);

afterAll(async () => {
  await orm?.close();
});

describe('Migration20261207000000_document_stats', () => {
  it('keeps the documents indexed before, without a stat', async () => {
    await orm.getMigrator().up();
    expect(await sql(`select id, file_path, checksum, size, mtime_ns from library_document`)).toEqual([
      { id: 'd', file_path: 'README.md', checksum: 'x', size: null, mtime_ns: null },
    ]);
  });
});
