import { describe, expect, it } from 'vitest';
import { migratedDatabase } from '../support/migrated-database.js';

/**
 * Migration20261215000000_snippet_scope_keys: a snippet's scope columns lose their foreign keys, and its library or
 * version still takes it along when deleted, through its document's keys.
 */
const db = migratedDatabase({ to: 'Migration20261214000000_binary_content_vectors' });
const sql = db.sql;

const keys = async () =>
  (await sql<{ conname: string }>(`select conname from pg_constraint where conrelid = 'snippet'::regclass and contype = 'f' order by conname`)).map((r) => r.conname);
const snippetsOf = async (repositoryId: string) =>
  (await sql<{ id: string }>(`select id from snippet where repository_id = ? order by id`, [repositoryId])).map((r) => r.id);

/** Library `id` with a version v1, a document at its default branch and one at v1, and a snippet in each. */
async function library(id: string) {
  await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, created_at, updated_at) values (?, 'L', 'local', '/l', 'indexed', 2, 5, now(), now())`, [id]);
  await sql(`insert into library_version (id, repository_id, tag, state, total_snippets, created_at) values (?, ?, 'v1', 'indexed', 1, now())`, [`${id}/v1`, id]);
  await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values (?, ?, 'README.md', 'x', now())`, [`${id}:main`, id]);
  await sql(`insert into library_document (id, repository_id, version_id, file_path, checksum, indexed_at) values (?, ?, ?, 'README.md', 'x', now())`, [`${id}:v1`, id, `${id}/v1`]);
  for (const [doc, version] of [[`${id}:main`, null], [`${id}:v1`, `${id}/v1`]] as const) {
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, token_count, ordinal, created_at)
       values (?, ?, ?, ?, 'info', 'Pools', 'Connections are pooled.', 4, 0, now())`,
      [`${doc}#0`, doc, id, version],
    );
  }
}

describe('Migration20261215000000_snippet_scope_keys', () => {
  it('drops the scope keys, removes snippets with their version or library as before, and rolls back', async () => {
    expect(await keys()).toEqual(['snippet_document_id_foreign', 'snippet_repository_id_foreign', 'snippet_version_id_foreign']);

    await db.up('Migration20261215000000_snippet_scope_keys');
    expect(await keys()).toEqual(['snippet_document_id_foreign']);
    await library('/x/y');
    expect(await snippetsOf('/x/y')).toEqual(['/x/y:main#0', '/x/y:v1#0']);
    await sql(`delete from library_version where id = '/x/y/v1'`);
    expect(await snippetsOf('/x/y')).toEqual(['/x/y:main#0']);
    await sql(`delete from library where id = '/x/y'`);
    expect(await snippetsOf('/x/y')).toEqual([]);

    await db.down('Migration20261214000000_binary_content_vectors');
    expect(await keys()).toEqual(['snippet_document_id_foreign', 'snippet_repository_id_foreign', 'snippet_version_id_foreign']);
  });
});
