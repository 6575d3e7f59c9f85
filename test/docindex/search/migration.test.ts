import { beforeAll, describe, expect, it } from 'vitest';
import { migratedDatabase } from '../../support/migrated-database.js';

/**
 * An existing install: snippets written under the search migrations before Migration20261127000000_search_stems,
 * then that migration. Its snippets must be re-vectorised (stems, no list numbering) and searchable as before.
 */
const db = migratedDatabase({ to: 'Migration20261126000000_event_retention' });
const sql = db.sql;

beforeAll(async () => {
  await sql(
    `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
     values ('s1', 'd', '/a/b', null, 'info', '5. Scaling', E'1. Add connections\\nKeep useEffect small.', null, 'Guide > 5. Scaling', 10, 0, now())`,
  );
}, 120_000);

describe('Migration20261127000000_search_stems', () => {
  it('re-vectorises existing snippets with stems and without list numbering, and drops the heading index', async () => {
    const before = ((await sql(`select search_vector::text as v from snippet`)) as { v: string }[])[0]!.v;
    expect(before).toContain("'5'");
    expect(before).not.toContain("'connect'");
    await db.up();
    const [row] = (await sql(
      `select search_vector::text as v,
              search_vector @@ (phraseto_tsquery('simple', 'connection') || phraseto_tsquery('english', 'connection')) as stem,
              search_vector @@ phraseto_tsquery('simple', 'useEffect') as exact,
              search_vector @@ phraseto_tsquery('simple', '5') as number
       from snippet`,
    )) as { v: string; stem: boolean; exact: boolean; number: boolean }[];
    expect(row).toMatchObject({ stem: true, exact: true, number: false });
    expect(row!.v).toContain("'scale':"); // the title's stem
    const indexes = (await sql(`select indexname from pg_indexes where tablename = 'snippet'`)) as { indexname: string }[];
    expect(indexes.map((i) => i.indexname)).toContain('snippet_search_vector_index');
    expect(indexes.map((i) => i.indexname)).not.toContain('snippet_heading_vector_index');
    // New rows are vectorised the same way.
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values ('s2', 'd', '/a/b', null, 'info', 'Other', 'Connections are pooled.', null, null, 10, 1, now())`,
    );
    const matched = (await sql(`select id from snippet where search_vector @@ phraseto_tsquery('english', 'connection') order by id`)) as { id: string }[];
    expect(matched.map((m) => m.id)).toEqual(['s1', 's2']);
  });

  it('can be rolled back to the previous vectors', async () => {
    await db.down('Migration20261126000000_event_retention');
    const [row] = (await sql(`select search_vector::text as v from snippet where id = 's1'`)) as { v: string }[];
    expect(row!.v).toContain("'5'");
    expect(row!.v).not.toContain("'connect'");
    await db.up();
  });
});
