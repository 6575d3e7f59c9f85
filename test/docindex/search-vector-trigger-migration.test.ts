import { describe, expect, it } from 'vitest';
import { migratedDatabase } from '../support/migrated-database.js';

/**
 * Migration20261209000000_search_vector_trigger_when: the snippet's vector trigger, split so that an insert that
 * brings its vector calls no function, keeps doing what it did: an insert without a vector gets
 * `snippet_search_vector`'s, one with a vector keeps it, and an update of the content computes it again.
 */
const db = migratedDatabase();
const sql = db.sql;
const vectorOf = async (id: string) =>
  (await sql<{ v: string; expected: string }>(`select search_vector::text as v, snippet_search_vector(title, breadcrumb, content)::text as expected from snippet where id = ?`, [id]))[0]!;
const insert = (id: string, content: string, vector: string | null) =>
  sql(
    `insert into snippet (id, document_id, repository_id, type, title, content, breadcrumb, token_count, ordinal, created_at, search_vector)
     values (?, 'd', '/a/b', 'info', 'Connection pools', ?, 'Guide > Pools', 5, 0, now(), ?::tsvector)`,
    [id, content, vector],
  );

describe('Migration20261209000000_search_vector_trigger_when', () => {
  it('fills the vector of an insert without one', async () => {
    await insert('s1', 'The connectionPool keeps sockets open, scaling connections.', null);
    const { v, expected } = await vectorOf('s1');
    expect(v).toBe(expected);
    expect(v).toContain("'connectionpool'");
  });

  it('keeps the vector an insert brings', async () => {
    await insert('s2', 'The connectionPool keeps sockets open.', `'staged':1`);
    expect((await vectorOf('s2')).v).toBe(`'staged':1`);
  });

  it('computes the vector again when the content changes, and only then', async () => {
    await sql(`update snippet set token_count = 6 where id = 's2'`);
    expect((await vectorOf('s2')).v).toBe(`'staged':1`);
    await sql(`update snippet set content = 'Retries are idempotent.' where id = 's2'`);
    const { v, expected } = await vectorOf('s2');
    expect(v).toBe(expected);
    expect(v).toContain("'idempot'");
  });

  it('has a trigger that calls no function for an insert that brings its vector', async () => {
    const triggers = await sql<{ tgname: string; when: string | null }>(
      `select tgname, pg_get_triggerdef(oid) ~ 'WHEN' as when from pg_trigger where tgrelid = 'snippet'::regclass and tgname like 'snippet_search_vector%' order by tgname`,
    );
    expect(triggers).toEqual([
      { tgname: 'snippet_search_vector_fill', when: true },
      { tgname: 'snippet_search_vector_refill', when: false },
    ]);
  });

  it('goes down to the one trigger it replaced', async () => {
    await db.down('Migration20261208000000_search_identifier_words');
    const names = await sql<{ tgname: string }>(`select tgname from pg_trigger where tgrelid = 'snippet'::regclass and tgname like 'snippet_search_vector%'`);
    expect(names.map((n) => n.tgname)).toEqual(['snippet_search_vector_fill']);
    await db.up();
  });
});
