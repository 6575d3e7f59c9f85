import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { identifierWords } from '../../../docindex/parse/code-words.js';
import { refreshTermStatistics } from '../../../docindex/search/keyword.js';
import { migratedDatabase } from '../../support/migrated-database.js';

/**
 * An existing install indexed before Migration20261208000000_search_identifier_words: its vectors are computed again
 * with weight D holding only the identifiers that split, its term statistics rebuilt, and SQL's identifier words are
 * the parse threads' (docindex/parse/code-words.ts), so a vector is the same however it was computed.
 */
const db = migratedDatabase({ to: 'Migration20261207000000_document_stats', totalSnippets: 22 });
const sql = db.sql;
const vectors = async () => (await sql<{ id: string; v: string }>(`select id, search_vector::text as v from snippet order by id`)).map((r) => `${r.id} ${r.v}`);
/** The lexemes of a snippet's vector that have a position of weight D. */
const weightD = async (id: string) =>
  (await sql<{ lexeme: string }>(`select lexeme from snippet, unnest(search_vector) u where id = ? and 'D' = any(u.weights) order by lexeme`, [id])).map((r) => r.lexeme);
const terms = async () => sql<{ lexeme: string; snippets: number }>(`select lexeme, snippets from search_term order by lexeme`);

beforeAll(async () => {
  await sql(
    `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
     values ('s1', 'd', '/a/b', null, 'info', '5. Scaling', E'1. Add connections\\nKeep useEffect small, e.g. in the HTTPServer.', null, 'Guide > 5. Scaling', 10, 0, now()),
            ('s2', 'd', '/a/b', null, 'code', 'openPool', 'export const pool = openPool(max_size, "pool.ts");', 'ts', 'src/pool.ts > openPool', 8, 1, now())`,
  );
  await sql(
    `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
     select 'r' || g, 'd', '/a/b', null, 'info', 'Routing ' || g, 'The routerTable matches paths, part ' || g, null, null, 10, g + 1, now() from generate_series(1, 20) g`,
  );
}, 120_000);

describe('Migration20261208000000_search_identifier_words', () => {
  it('indexes at weight D only the identifiers that split, and rebuilds the term statistics from the new vectors', async () => {
    const before = await vectors();
    expect(await weightD('s1')).toEqual(['add', 'connections', 'e', 'effect', 'g', 'http', 'in', 'keep', 'server', 'small', 'the', 'use']);
    await db.up();
    expect(await vectors()).not.toEqual(before);
    expect(await weightD('s1')).toEqual(['e', 'effect', 'g', 'http', 'server', 'use']);
    expect(await weightD('s2')).toEqual(['max', 'open', 'pool', 'size', 'ts']);
    // Every stored vector is what the function gives now, and a split identifier still matches as its phrase.
    const [wrong] = await sql<{ n: number }>(`select count(*)::int as n from snippet where search_vector is distinct from snippet_search_vector(title, breadcrumb, content)`);
    expect(wrong!.n).toBe(0);
    const [phrase] = await sql<{ hit: boolean }>(`select search_vector @@ phraseto_tsquery('simple', 'use Effect') as hit from snippet where id = 's1'`);
    expect(phrase!.hit).toBe(true);
    // The statistics are an indexing run's, from the new vectors: `table` is there (weight D of the 20 `routerTable`).
    const stored = await terms();
    expect(stored).toEqual(expect.arrayContaining([{ lexeme: 'table', snippets: 20 }, { lexeme: 'routertable', snippets: 20 }]));
    await refreshTermStatistics(db.orm().em.fork(), { repositoryId: '/a/b', versionId: null });
    expect(await terms()).toEqual(stored);

    await db.down('Migration20261207000000_document_stats');
    expect(await vectors()).toEqual(before);
    await db.up();
  });

  it("gives the parse threads' identifier words", async () => {
    await db.up();
    const repo = path.join(import.meta.dirname, '../../..');
    const texts = [
      'Use useEffect, snake_case and Foo.bar; HTTPServer e.g. dashboard. $HOME --verbose <a href="x.html"> v1.2.3 3.14',
      'café.bar 東京.設定 a::b XMLHttpRequest ABCd aB__Cd -x- ..a.. path/to/file.md#anchor `getServerSideProps()` 🚀.rocket',
      "it's O'Reilly's\ttab\u00a0nbsp.word back\\slash.x {a.b} [c_d] x=y.z !e.f? 'g.h' ~i.j^ @scope/pkg%2Fname",
      ...['docs', 'docindex/parse', 'docindex/search'].flatMap((dir) =>
        fs.readdirSync(path.join(repo, dir)).filter((n) => /\.(md|ts)$/.test(n)).map((n) => fs.readFileSync(path.join(repo, dir, n), 'utf8')),
      ),
    ];
    const rows = await sql<{ words: string }>(`select gristmill_identifier_words(t) as words from json_array_elements_text(?::json) with ordinality as a(t, n) order by n`, [JSON.stringify(texts)]);
    expect(texts.length).toBeGreaterThan(30);
    expect(rows.map((r) => r.words)).toEqual(texts.map(identifierWords));
    expect(identifierWords(texts[0]!)).toBe('use Effect snake case Foo bar HTTP Server e g  x html v1 2 3 3 14');
  });
});
