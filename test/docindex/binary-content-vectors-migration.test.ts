import { beforeAll, describe, expect, it } from 'vitest';
import { migratedDatabase } from '../support/migrated-database.js';

/** An install before Migration20261214000000_binary_content_vectors: content parts were staged as tsvector literals. */
const db = migratedDatabase({ to: 'Migration20261213000000_content_vectors' });

beforeAll(async () => {
  await db.sql(`insert into job (id, kind, workflow_id, status, created_at, updated_at) values ('j', 'index', 'index:/a/b', 'running', now(), now())`);
});

const column = async () =>
  (await db.sql<{ type: string; attstorage: string }>(
    `select format_type(atttypid, atttypmod) as type, attstorage from pg_attribute where attrelid = 'staged_document'::regclass and attname = 'content_vectors'`,
  ))[0];

describe('Migration20261214000000_binary_content_vectors', () => {
  it('keeps staged content parts as vectors, converting the rows staged as text, and rolls back', async () => {
    expect(await column()).toEqual({ type: 'text[]', attstorage: 'e' });
    await db.sql(
      `insert into staged_document (job_id, file_path, checksum, snippets, content_vectors) values ('j', 'a.md', 'c', '[{"content":"x"},{"content":"y"}]', ?::text[])`,
      [`{"'connect':1,3 'pool':2",NULL}`],
    );

    await db.up();
    expect(await column()).toEqual({ type: 'tsvector[]', attstorage: 'e' });
    const [row] = await db.sql<{ first: string; second: string | null }>(
      `select content_vectors[1]::text as first, content_vectors[2]::text as second from staged_document where file_path = 'a.md'`,
    );
    expect(row).toEqual({ first: "'connect':1,3 'pool':2", second: null });

    await db.down('Migration20261214000000_binary_content_vectors');
    expect(await column()).toEqual({ type: 'text[]', attstorage: 'e' });
  });
});
