import { beforeAll, describe, expect, it } from 'vitest';
import { keywordSearch, refreshTermStatistics } from '../../../docindex/search/keyword.js';
import { migratedDatabase } from '../../support/migrated-database.js';

/**
 * An existing install: a library and one of its versions indexed before Migration20261129000000_search_terms. The
 * migration must give both scopes the statistics an indexing run would have stored, so keyword search ranks them as
 * it ranks a freshly indexed library.
 */
const db = migratedDatabase({ to: 'Migration20261128000000_snippet_neighbours', totalSnippets: 30 });
const sql = db.sql;
const terms = async (versionId: string | null) =>
  (await sql(`select lexeme, snippets from search_term where repository_id = '/a/b' and coalesce(version_id, '') = ? order by lexeme`, [versionId ?? ''])) as {
    lexeme: string;
    snippets: number;
  }[];

beforeAll(async () => {
  await sql(`insert into library_version (id, repository_id, tag, state, total_snippets, created_at) values ('/a/b/v1', '/a/b', 'v1', 'indexed', 25, now())`);
  await sql(`insert into library_document (id, repository_id, version_id, file_path, checksum, indexed_at) values ('dv', '/a/b', '/a/b/v1', 'README.md', 'x', now())`);
  // 30 snippets about routers on the default branch, 25 about plugins in v1 (one of them also naming a router).
  await sql(
    `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
     select 's' || g, 'd', '/a/b', null, 'info', 'Routing ' || g, 'The router matches paths, part ' || g, null, null, 10, g, now() from generate_series(1, 30) g
     union all
     select 'v' || g, 'dv', '/a/b', '/a/b/v1', 'info', 'Plugins ' || g, case when g = 1 then 'A plugin with a router' else 'A plugin, part ' || g end, null, null, 10, g, now()
     from generate_series(1, 25) g`,
  );
}, 120_000);

describe('Migration20261129000000_search_terms', () => {
  it('stores the statistics of every scope already indexed, as an indexing run would', async () => {
    await db.up();
    const main = await terms(null);
    const v1 = await terms('/a/b/v1');
    expect(main).toEqual(expect.arrayContaining([{ lexeme: 'router', snippets: 30 }, { lexeme: 'rout', snippets: 30 }]));
    expect(main.some((t) => t.lexeme === 'plugin')).toBe(false); // another scope's word
    expect(v1).toEqual(expect.arrayContaining([{ lexeme: 'plugin', snippets: 25 }]));
    expect(v1.some((t) => t.lexeme === 'router')).toBe(false); // one snippet of v1: rare, not stored

    // The same rows refreshTermStatistics writes for each scope.
    await refreshTermStatistics(db.orm().em.fork(), { repositoryId: '/a/b', versionId: null });
    await refreshTermStatistics(db.orm().em.fork(), { repositoryId: '/a/b', versionId: '/a/b/v1' });
    expect(await terms(null)).toEqual(main);
    expect(await terms('/a/b/v1')).toEqual(v1);

    // And keyword search reads them: "router" is common on the default branch (its share of 20 candidates is 20).
    const ranked = await keywordSearch(db.orm().em.fork(), { repositoryId: '/a/b', versionId: null }, 'router', 50, { candidates: 20 });
    expect(ranked).toHaveLength(20);
    const inV1 = await keywordSearch(db.orm().em.fork(), { repositoryId: '/a/b', versionId: '/a/b/v1' }, 'router', 50, { candidates: 20 });
    expect(inV1.map((r) => r.id)).toEqual(['v1']);
  });

  it('is dropped with the library and version it describes', async () => {
    await sql(`delete from library_version where id = '/a/b/v1'`);
    expect(await terms('/a/b/v1')).toEqual([]);
    expect((await terms(null)).length).toBeGreaterThan(0);
    await sql(`delete from library where id = '/a/b'`);
    expect(await terms(null)).toEqual([]);
  });
});
