import { beforeAll, describe, expect, it } from 'vitest';
import { migratedDatabase } from '../support/migrated-database.js';
import { referenceVector, TRICKY_SNIPPETS } from './search-vector-reference.js';

/**
 * Migration20261210000000_search_vector_parts: `snippet_search_vector` in parts (the title's, the breadcrumb's, and
 * the rest joined to them) that give the same vectors, byte for byte, as the function they replace, so that the
 * staged vectors can compute a title's and a breadcrumb's part once (docindex/staged-vectors.ts).
 */
const db = migratedDatabase();
const sql = db.sql;
const REFERENCE = referenceVector('s.title', 's.breadcrumb', 's.content', 'gristmill_identifier_words(s.content)');

/** Which tricky snippets' vector, computed by `way` (over s.title, s.breadcrumb, s.content), has the reference's bytes. */
const sameAsReference = async (way: string) =>
  (await sql<{ same: boolean }>(`select tsvectorsend(${way}) = tsvectorsend(${REFERENCE}) as same from tricky s order by n`)).map((r) => r.same);
const ALL_SAME = TRICKY_SNIPPETS.map(() => true);

beforeAll(async () => {
  await sql(`create table tricky (n int primary key, title text, breadcrumb text, content text not null)`);
  for (const [n, s] of TRICKY_SNIPPETS.entries()) await sql(`insert into tricky values (?, ?, ?, ?)`, [n, s.title, s.breadcrumb, s.content]);
}, 120_000);

describe('Migration20261210000000_search_vector_parts', () => {
  it('gives the vectors the function it replaces gave, through both signatures', async () => {
    expect(await sameAsReference('snippet_search_vector(s.title, s.breadcrumb, s.content)')).toEqual(ALL_SAME);
    expect(await sameAsReference('snippet_search_vector(s.title, s.breadcrumb, s.content, gristmill_identifier_words(s.content))')).toEqual(ALL_SAME);
    // The tricky ones are: the long content's positions reach their limit, and a word is in all three parts.
    const [long] = await sql<{ v: string }>(`select snippet_search_vector(title, breadcrumb, content)::text as v from tricky where n = 4`);
    expect(long!.v).toContain(':16383C');
  });

  it('gives them from its parts, a null title or breadcrumb being an empty one', async () => {
    expect(
      await sameAsReference(
        `snippet_search_vector_of(snippet_title_vector(s.title), snippet_breadcrumb_vector(s.breadcrumb), s.content, gristmill_identifier_words(s.content))`,
      ),
    ).toEqual(ALL_SAME);
    const [empty] = await sql<{ title: boolean; breadcrumb: boolean }>(
      `select tsvectorsend(snippet_title_vector(null)) = tsvectorsend(snippet_title_vector('')) as title,
              tsvectorsend(snippet_breadcrumb_vector(null)) = tsvectorsend(snippet_breadcrumb_vector('')) as breadcrumb`,
    );
    expect(empty).toEqual({ title: true, breadcrumb: true });
  });

  it('goes down to the one function, which still gives the same vectors', async () => {
    await db.down('Migration20261209000000_search_vector_trigger_when');
    const [parts] = await sql<{ n: number }>(
      `select count(*)::int as n from pg_proc where proname in ('snippet_title_vector', 'snippet_breadcrumb_vector', 'snippet_search_vector_of')`,
    );
    expect(parts!.n).toBe(0);
    expect(await sameAsReference('snippet_search_vector(s.title, s.breadcrumb, s.content)')).toEqual(ALL_SAME);
    await db.up();
    expect(await sameAsReference('snippet_search_vector(s.title, s.breadcrumb, s.content)')).toEqual(ALL_SAME);
  });
});
