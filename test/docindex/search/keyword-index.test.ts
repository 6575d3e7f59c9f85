import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keywordCandidates, keywordSearch, tsquery, UNIT, WEIGHTS } from '../../../docindex/search/keyword.js';
import { indexCandidates, KeywordIndex, KeywordIndexTooLargeError, loadKeywordIndex, parseTsVector, searchKeywordIndex, termQueries } from '../../../docindex/search/keyword-index.js';
import { termForms } from '../../../docindex/search/keyword-plan.js';
import { matches, parseTsQuery, tsRank, UnsupportedQueryError } from '../../../docindex/search/tsquery.js';
import { closeSearch, keywordIndex, keywordIndexCacheSize, loadScopeKeywordIndex, search } from '../../../docindex/search/search.js';
import { createLogger } from '../../../core/log.js';
import { startTestStack, type TestStack } from '../../support/stack.js';

/**
 * The in-process keyword index (docindex/search/keyword-index.ts) must rank exactly as the SQL ranking does where
 * that reads every match: PostgreSQL's `@@` and `ts_rank` are reproduced in tsquery.ts, and checked here against
 * PostgreSQL itself, snippet by snippet, then whole rankings against keywordSearch.
 */
let stack: TestStack;
const LIB = '/kwindex/lib';
const scope = { repositoryId: LIB, versionId: null };
const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);

const SNIPPETS: [string, string, string, string][] = [
  ['a1', 'Routes', 'Declare a route with app.get(path, handler); the route handler receives the request and the reply.', 'Guide > Routing'],
  ['a2', 'Route options', 'Each route takes options: schema, onRequest hooks, and a handler. Routes are registered before listen.', 'Guide > Routing'],
  ['a3', 'Hooks', 'The onRequest hook runs first, then preHandler; useEffect-style cleanup is not needed. Hooks hook hooks.', 'Reference > Hooks'],
  ['a4', 'Get the value', 'Call getServerSideProps to get the value of the server side props on every request.', 'Data fetching'],
  ['a5', 'Logging', 'The logger writes JSON lines; set the level with logger.level = "debug" or pass options to pino().', 'Reference > Logging'],
  ['a6', 'Graceful shutdown', 'Close the server on SIGTERM: await app.close() waits for connections to end, then exits.', 'Guide > Deploy'],
  ['a7', 'Schemas', 'Validation and serialization use JSON Schema; a schema per route validates the body, query string and params.', 'Reference > Validation'],
  ['a8', "It's a 'quoted' word", 'Backslash \\ and quote \' in text; snake_case_name and HTTPServer and Foo.bar and a-b-c.', 'Misc'],
  ['a9', 'Connections', 'Connection pooling keeps connections open; connect() opens one connection per worker.', 'Guide > Database'],
  ['a10', 'Plugins', 'Encapsulation: a plugin registered with a prefix sees its own decorators; the prefix applies to every route of the plugin.', 'Guide > Plugins'],
];

beforeAll(async () => {
  stack = await startTestStack({ api: false, queues: [] });
  await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, created_at, updated_at) values (?, 'Index', 'local', '/kwindex', 'indexed', ?, 5, now(), now())`, [LIB, SNIPPETS.length]);
  await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('d1', ?, 'a.md', 'x', now()), ('d2', ?, 'b.md', 'x', now())`, [LIB, LIB]);
  for (const [i, [id, title, content, breadcrumb]] of SNIPPETS.entries()) {
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values (?, ?, ?, null, 'info', ?, ?, null, ?, 10, ?, now())`,
      [id, i % 2 ? 'd1' : 'd2', LIB, title, content, breadcrumb, i],
    );
  }
});

afterAll(async () => {
  await stack?.stop();
});

const TERMS = ['route', 'routes', 'onRequest', 'hook', 'useEffect', 'getServerSideProps', 'get the value', 'server side props', 'logger', 'connections', 'snake_case_name', 'HTTPServer', 'Foo.bar', "it's", 'quoted', 'schema', 'prefix', 'the'];
const QUERIES = [
  'how do I register a route with a schema',
  'onRequest hook lifecycle',
  'route -schema',
  'route -"route options"',
  '"the server side props"',
  'graceful shutdown close',
  'logger level debug',
  'connection pooling',
  'HTTPServer snake_case_name',
  'plugin encapsulation and prefix',
  'useEffect',
  'the',
  'nothingmatcheshere',
];

describe('tsquery.ts', () => {
  it('parses what PostgreSQL prints', () => {
    expect(parseTsQuery("'a' <-> 'b' | 'c'")).toEqual({
      op: 'or',
      left: { op: 'phrase', distance: 1, left: { op: 'lexeme', lexeme: 'a' }, right: { op: 'lexeme', lexeme: 'b' } },
      right: { op: 'lexeme', lexeme: 'c' },
    });
    expect(parseTsQuery("'get' <2> 'valu'")).toMatchObject({ op: 'phrase', distance: 2 });
    expect(parseTsQuery("'it''s' & !( 'x' | 'y' )")).toMatchObject({ op: 'and', left: { lexeme: "it's" }, right: { op: 'not' } });
    expect(parseTsQuery('')).toBeUndefined();
    expect(() => parseTsQuery("'pre':*")).toThrow(UnsupportedQueryError);
    expect(() => parseTsQuery("'a' 'b'")).toThrow(UnsupportedQueryError);
  });

  it('reads tsvector text with weights, escapes and no positions', () => {
    const seen: [string, number[]][] = [];
    parseTsVector("'a':1A,2 'it''s':3C 'back\\\\slash':4B 'bare'", (l, p) => seen.push([l, p]));
    expect(seen).toEqual([
      ['a', [1 | (3 << 14), 2]],
      ["it's", [3 | (1 << 14)]],
      ['back\\slash', [4 | (2 << 14)]],
      ['bare', []],
    ]);
  });

  it('matches and ranks every term on every snippet exactly as PostgreSQL does', async () => {
    const weights = WEIGHTS.slice(1, -1).split(',').map((w) => Math.fround(Number(w)));
    const vectors = (await sql(`select id, search_vector::text as v from snippet where repository_id = ? order by id`, [LIB])) as { id: string; v: string }[];
    let compared = 0;
    for (const term of TERMS) {
      const q = tsquery(termForms(term));
      const rows = (await sql(
        `select s.id, (s.search_vector @@ ${q.text}) as m, ts_rank('${WEIGHTS}', s.search_vector, ${q.text}, 0)::float8 * ${UNIT} as r, (${q.text})::text as qt
         from snippet s where s.repository_id = ? order by s.id`,
        [...q.params, ...q.params, ...q.params, LIB],
      )) as { id: string; m: boolean; r: number; qt: string }[];
      for (const row of rows) {
        const query = parseTsQuery(row.qt)!;
        const lex = new Map<string, Uint16Array>();
        parseTsVector(vectors.find((v) => v.id === row.id)!.v, (l, p) => lex.set(l, Uint16Array.from(p)));
        const lexemes = (l: string) => lex.get(l);
        expect(matches(query, lexemes), `${term} @@ ${row.id}`).toBe(row.m);
        if (row.m) {
          expect(tsRank(weights, query, lexemes) * UNIT, `${term} on ${row.id}`).toBeCloseTo(Number(row.r), 9);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(30);
  });
});

describe('the keyword index', () => {
  it('ranks every query as the SQL ranking does when that reads every match', async () => {
    const em = stack.orm.em.fork();
    const index = await loadKeywordIndex(em, scope);
    expect(index).toBeInstanceOf(KeywordIndex);
    expect(index.size).toBe(SNIPPETS.length);
    for (const query of QUERIES) {
      const fromSql = await keywordSearch(em, scope, query, 50, { candidates: 100_000 });
      const fromIndex = await searchKeywordIndex(em, index, query, 50);
      expect(fromIndex.map((r) => r.id), query).toEqual(fromSql.map((r) => r.id));
      fromIndex.forEach((r, i) => expect(r.score, `${query}: ${r.id}`).toBeCloseTo(fromSql[i]!.score, 9));
      // The statistics a search across libraries weighs them by again (keyword.ts, `sharedStatistics`) are the same too.
      const sqlStats = await keywordCandidates(em, scope, query, 50, { candidates: 100_000 });
      const indexStats = await indexCandidates(em, index, query, 50);
      expect({ snippets: indexStats?.snippets, df: indexStats?.df }, query).toEqual({ snippets: sqlStats?.snippets, df: sqlStats?.df });
    }
    // The bounded selection of the best few (a heap of scores) picks what a full sort does.
    const terms = await termQueries(em, ['route', 'the', 'handler']);
    const all = index.rank(terms, [], 100);
    expect(all.length).toBeGreaterThan(2);
    expect(index.rank(terms, [], 2)).toEqual(all.slice(0, 2));
    // Sanity: the queries are not all empty answers.
    expect((await searchKeywordIndex(em, index, 'onRequest hook lifecycle', 5))[0]!.id).toBe('a3');
  });

  it('asks PostgreSQL to stem a term once', async () => {
    const em = stack.orm.em.fork();
    const first = await termQueries(em, ['websockets-unique-term']);
    let asked = 0;
    const counting = new Proxy(em, { get: (t, p) => (p === 'execute' ? (...a: unknown[]) => (asked++, (t.execute as (...x: unknown[]) => unknown)(...a)) : Reflect.get(t, p)) });
    expect(await termQueries(counting, ['websockets-unique-term'])).toEqual(first);
    expect(asked).toBe(0);
  });
});

describe('keyword search through the index', () => {
  const deps = () => ({ config: stack.config, log: createLogger('error') });
  const until = async (ready: () => boolean) => {
    for (let i = 0; i < 200 && !ready(); i++) await new Promise((r) => setTimeout(r, 10));
  };

  it('ranks in SQL until the index is loaded in the background, then from the index, one per stamp', async () => {
    await closeSearch();
    const em = stack.orm.em.fork();
    expect(keywordIndex(deps(), em, scope, 'one')).toBeUndefined();
    await until(() => keywordIndex(deps(), em, scope, 'one') !== undefined);
    const index = keywordIndex(deps(), em, scope, 'one')!;
    expect(index.size).toBe(SNIPPETS.length);
    const ask = (stamp: string) => search(deps(), em, { scope, query: 'connection pooling', mode: 'keyword', alpha: 0, limit: 10, stamp });
    expect((await ask('one')).ranked[0]!.id).toBe('a9');

    // A re-index (a new stamp) is read again: a snippet written since is found.
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values ('b1', 'd1', ?, null, 'info', 'Pools', 'Connection pooling pooling connection pool sizes.', null, 'Guide', 10, 99, now())`,
      [LIB],
    );
    try {
      expect(keywordIndex(deps(), em, scope, 'two')).toBeUndefined();
      expect((await ask('two')).ranked.map((r) => r.id)).toContain('b1'); // SQL meanwhile
      await until(() => keywordIndex(deps(), em, scope, 'two') !== undefined);
      expect(keywordIndex(deps(), em, scope, 'two')!.size).toBe(SNIPPETS.length + 1);
      expect(keywordIndex(deps(), em, scope, 'one')).toBeUndefined(); // the older stamp was dropped
    } finally {
      await sql(`delete from snippet where id = 'b1'`);
    }
  });

  it('loads one index at a time in the background: a scope asked for meanwhile is loaded at a later query', async () => {
    await closeSearch();
    const em = stack.orm.em.fork();
    const other = { repositoryId: LIB, versionId: 'v-other' };
    expect(keywordIndex(deps(), em, scope, 'first')).toBeUndefined();
    expect(keywordIndex(deps(), em, other, 'first')).toBeUndefined(); // asked while the first loads: not started
    await until(() => keywordIndex(deps(), em, scope, 'first') !== undefined);
    await new Promise((r) => setTimeout(r, 200));
    expect(keywordIndexCacheSize().entries).toBe(1);
    expect(keywordIndex(deps(), em, other, 'first')).toBeUndefined(); // now its load starts
    await until(() => keywordIndex(deps(), em, other, 'first') !== undefined);
    expect(keywordIndex(deps(), em, other, 'first')!.size).toBe(0);
    expect(keywordIndexCacheSize().entries).toBe(2);
  });

  it('loads for the warm-up after indexing in turn: it waits for the load a query started', async () => {
    await closeSearch();
    const em = stack.orm.em.fork();
    const other = { repositoryId: LIB, versionId: 'v-other' };
    expect(keywordIndex(deps(), em, scope, 'turn')).toBeUndefined(); // a query starts a load
    const warm = loadScopeKeywordIndex(deps(), em, other, 'turn'); // as warm.ts does, meanwhile
    expect(keywordIndexCacheSize().loads).toBe(1); // waiting, not loading beside it
    expect((await warm)!.size).toBe(0);
    expect(keywordIndex(deps(), em, scope, 'turn')).toBeDefined(); // the query's finished first
    expect(keywordIndexCacheSize()).toMatchObject({ entries: 2, loads: 0 });
  });

  it('stops reading an index that outgrows the cache, and ranks that scope in SQL from then on', async () => {
    const whole = await loadKeywordIndex(stack.orm.em.fork(), scope);
    expect((await loadKeywordIndex(stack.orm.em.fork(), scope, whole.bytes)).bytes).toBe(whole.bytes); // the estimate is the size
    await expect(loadKeywordIndex(stack.orm.em.fork(), scope, whole.bytes - 1)).rejects.toBeInstanceOf(KeywordIndexTooLargeError);
    // One whose snippets and postings alone cannot fit is refused from PostgreSQL's counts, before a row is read.
    const [{ postings }] = (await sql(`select sum(length(search_vector))::int as postings from snippet where repository_id = ? and version_id is null`, [LIB])) as [{ postings: number }];
    // Per snippet: id, document, length and its norm, a ranking's arrays (scores, flags, candidates, 4 terms' slots),
    // and 8 kept terms' matches.
    const least = 8 + postings * 8 + SNIPPETS.length * (100 + 15 + 4 + 8 + (8 + 1 + 1 + 4 + 4 * 12 + 8 * 12));
    expect(least).toBeLessThan(whole.bytes);
    await expect(loadKeywordIndex(stack.orm.em.fork(), scope, least - 1)).rejects.toMatchObject({ bytes: least });
    await closeSearch();
    const small = { ...deps(), config: { ...stack.config, searchKeywordCacheBytes: whole.bytes - 1 } };
    expect(keywordIndex(small, stack.orm.em.fork(), scope, 'small')).toBeUndefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(keywordIndex(small, stack.orm.em.fork(), scope, 'small')).toBeUndefined();
    expect(keywordIndexCacheSize()).toEqual({ entries: 0, bytes: 0, loads: 0 });
    expect((await search(small, stack.orm.em.fork(), { scope, query: 'route handler', mode: 'keyword', alpha: 0, limit: 3, stamp: 'small' })).ranked.length).toBeGreaterThan(0);
  });

  it('stays in SQL when the cache is off', async () => {
    await closeSearch();
    const off = { ...deps(), config: { ...stack.config, searchKeywordCacheBytes: 0 } };
    expect(keywordIndex(off, stack.orm.em.fork(), scope, 'off')).toBeUndefined();
    await new Promise((r) => setTimeout(r, 100));
    expect(keywordIndex(off, stack.orm.em.fork(), scope, 'off')).toBeUndefined();
  });
});
