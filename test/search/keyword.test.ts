import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keywordSearch } from '../../search/keyword.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Keyword ranking tiers (search/keyword.ts), on snippets written straight into the database so each tier's size is
 * exact: heading matches of every term, then content matches of every term, then matches of one term.
 */
let stack: TestStack;
const LIB = '/tiers/lib';
const scope = { repositoryId: LIB, versionId: null };
const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);
const search = (query: string, limit: number, candidates = 5000) => keywordSearch(stack.orm.em.fork(), scope, query, limit, { candidates });

async function snippet(id: string, title: string, content: string): Promise<void> {
  await sql(
    `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
     values (?, 'doc', ?, null, 'info', ?, ?, null, 'Guide', 10, 0, now())`,
    [id, LIB, title, content],
  );
}

beforeAll(async () => {
  stack = await startTestStack({ api: false, queues: [] });
  await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, created_at, updated_at) values (?, 'Tiers', 'local', '/tiers', 'indexed', 0, 5, now(), now())`, [LIB]);
  await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('doc', ?, 'README.md', 'x', now())`, [LIB]);
  // Content matches that repeat both terms, so by ts_rank alone some would beat a short heading match.
  for (let i = 0; i < 10; i++) await snippet(`b${i}`, `Other topic ${i}`, `router cache router cache router cache ${'filler '.repeat(i)}`);
  for (let i = 0; i < 3; i++) await snippet(`a${i}`, `Router cache ${i}`, `about ${'words '.repeat(40 + i)}`);
  for (let i = 0; i < 5; i++) await snippet(`c${i}`, `Only one ${i}`, `the router only ${'more '.repeat(i)}`);
  await snippet('x0', 'Router cache excluded', 'router cache legacy');
  for (let i = 0; i < 150; i++) await snippet(`p${String(i).padStart(3, '0')}`, `Plain ${i}`, `common ${'word '.repeat(i % 7)}`);
});

afterAll(async () => {
  await stack?.stop();
});

describe('keyword ranking tiers', () => {
  it('ranks title or breadcrumb matches of every term first, then every term, then one term, each once', async () => {
    const ranked = await search('router cache -legacy', 50);
    const ids = ranked.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, 3).sort()).toEqual(['a0', 'a1', 'a2']);
    expect(ids.slice(3, 13).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `b${i}`));
    expect(ids.slice(13).sort()).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    expect(ids).not.toContain('x0');
    // Scores fall from tier to tier, so fusion and callers see one ordering.
    for (let i = 1; i < ranked.length; i++) expect(ranked[i]!.score).toBeLessThanOrEqual(ranked[i - 1]!.score);
  });

  it('fills a page from the tiers in order when the first ones are short', async () => {
    const ids = (await search('router cache -legacy', 5)).map((r) => r.id);
    expect(ids.slice(0, 3).sort()).toEqual(['a0', 'a1', 'a2']);
    expect(ids.slice(3)).toEqual([expect.stringMatching(/^b/), expect.stringMatching(/^b/)]);
  });

  it('ranks at most SEARCH_RANK_CANDIDATES matches of a tier, and still fills the page', async () => {
    const all = await search('common', 100, 150);
    const capped = await search('common', 100, 100);
    expect(all).toHaveLength(100);
    expect(capped).toHaveLength(100);
    // The bound changes which rows were ranked (the first 100 found), not the order rules among them.
    expect(capped.map((r) => r.id)).not.toEqual(all.map((r) => r.id));
    for (let i = 1; i < capped.length; i++) expect(capped[i]!.score).toBeLessThanOrEqual(capped[i - 1]!.score);
  });
});

describe('keyword query syntax', () => {
  it('leaves out excluded words and phrases in every tier', async () => {
    expect((await search('router cache', 50)).map((r) => r.id)).toContain('x0');
    expect((await search('router cache -legacy', 50)).map((r) => r.id)).not.toContain('x0');
    expect((await search('router -"cache legacy"', 50)).map((r) => r.id)).not.toContain('x0');
    expect((await search('router -"cache legacy"', 50)).map((r) => r.id)).toContain('c0');
  });
});
