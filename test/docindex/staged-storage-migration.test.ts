import { beforeAll, describe, expect, it } from 'vitest';
import { migratedDatabase } from '../support/migrated-database.js';

/** An install before Migration20261212000000_staged_storage: staged rows were compressed as they were written. */
const db = migratedDatabase({ to: 'Migration20261211000000_search_stamp' });

beforeAll(async () => {
  await db.sql(`insert into job (id, kind, workflow_id, status, created_at, updated_at) values ('j', 'index', 'index:/a/b', 'running', now(), now())`);
});

const storage = async () =>
  Object.fromEntries(
    (await db.sql<{ attname: string; attstorage: string }>(
      `select attname, attstorage from pg_attribute where attrelid = 'staged_document'::regclass and attname in ('snippets', 'vectors')`,
    )).map((r) => [r.attname, r.attstorage]),
  );

/** A staged file of 40 snippets (about 40 KB of JSON), as a crawl writes it, and how PostgreSQL stored it. */
async function stageBigFile(path: string) {
  const snippets = Array.from({ length: 40 }, (_, i) => ({ type: 'info', title: `Part ${i}`, content: 'Connections are pooled per host. '.repeat(30), ordinal: i }));
  await db.sql(`insert into staged_document (job_id, file_path, checksum, snippets) values ('j', ?, 'c', ?::jsonb)`, [path, JSON.stringify(snippets)]);
  const [row] = await db.sql<{ snippets: string | null; n: number }>(
    `select pg_column_compression(snippets) as snippets, jsonb_array_length(snippets) as n from staged_document where file_path = ?`,
    [path],
  );
  return row!;
}

describe('Migration20261212000000_staged_storage', () => {
  it('stores staged snippets and vectors out of line without compressing them, and rolls back', async () => {
    expect(await storage()).toEqual({ snippets: 'x', vectors: 'x' });
    expect(await stageBigFile('before.md')).toEqual({ snippets: 'pglz', n: 40 });

    await db.up();
    expect(await storage()).toEqual({ snippets: 'e', vectors: 'e' });
    expect(await stageBigFile('after.md')).toEqual({ snippets: null, n: 40 });
    // The row staged before reads as it was.
    const [before] = await db.sql<{ n: number }>(`select jsonb_array_length(snippets) as n from staged_document where file_path = 'before.md'`);
    expect(before!.n).toBe(40);

    await db.down('Migration20261211000000_search_stamp');
    expect(await storage()).toEqual({ snippets: 'x', vectors: 'x' });
  });
});
