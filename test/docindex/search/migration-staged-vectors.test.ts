import { beforeAll, describe, expect, it } from 'vitest';
import { migratedDatabase } from '../../support/migrated-database.js';

/**
 * An existing install: snippets whose vectors PostgreSQL generated, then Migration20261205000000_staged_search_vectors.
 * Every stored vector stays as it was, and the column, now plain, is still filled for every writer.
 */
const db = migratedDatabase({ to: 'Migration20261203000000_rerank_profiles', totalSnippets: 2 });
const sql = db.sql;
const vectors = async () => (await sql<{ id: string; v: string }>(`select id, search_vector::text as v from snippet order by id`)).map((r) => `${r.id} ${r.v}`);
const generated = async () => (await sql<{ g: string }>(`select attgenerated as g from pg_attribute where attrelid = 'snippet'::regclass and attname = 'search_vector'`))[0]!.g;

beforeAll(async () => {
  await sql(
    `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
     values ('s1', 'd', '/a/b', null, 'info', '5. Scaling', E'1. Add connections\\nKeep useEffect small.', null, 'Guide > 5. Scaling', 10, 0, now()),
            ('s2', 'd', '/a/b', null, 'code', 'openPool', 'export const pool = openPool();', 'ts', 'src/pool.ts > openPool', 8, 1, now())`,
  );
}, 120_000);

describe('Migration20261205000000_staged_search_vectors', () => {
  it('keeps every stored vector, and fills the plain column for rows written without one', async () => {
    const before = await vectors();
    expect(await generated()).toBe('s');
    await db.up('Migration20261205000000_staged_search_vectors');
    expect(await generated()).toBe('');
    expect(await vectors()).toEqual(before);
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values ('s3', 'd', '/a/b', null, 'info', 'Other', 'Connections are pooled.', null, null, 10, 2, now())`,
    );
    const [row] = await sql<{ right: boolean }>(`select search_vector = snippet_search_vector(title, breadcrumb, content) as right from snippet where id = 's3'`);
    expect(row!.right).toBe(true);
    const staged = await sql<{ column_name: string }>(`select column_name from information_schema.columns where table_name = 'staged_document' and column_name = 'vectors'`);
    expect(staged).toHaveLength(1);
  });

  it('can be rolled back to the generated column, with the same vectors', async () => {
    const before = await vectors();
    await db.down('Migration20261203000000_rerank_profiles');
    expect(await generated()).toBe('s');
    expect(await vectors()).toEqual(before);
    await db.up('Migration20261205000000_staged_search_vectors');
  });
});
