import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keywordSearch, MIN_TERM_SNIPPETS, refreshTermStatistics } from '../../../docindex/search/keyword.js';
import { startTestStack, type TestStack } from '../../support/stack.js';

/**
 * Keyword ranking (docindex/search/keyword.ts): BM25-style weighting in PostgreSQL over stems and exact identifiers, on
 * snippets written straight into the database so each case is exact.
 */
let stack: TestStack;
const LIB = '/ranking/lib';
const scope = { repositoryId: LIB, versionId: null };
const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);
const search = (query: string, limit = 50, candidates = 5000) => keywordSearch(stack.orm.em.fork(), scope, query, limit, { candidates });
const ids = async (query: string, limit = 50, candidates = 5000) => (await search(query, limit, candidates)).map((r) => r.id);

async function snippet(id: string, title: string, content: string, breadcrumb = 'Guide'): Promise<void> {
  await sql(
    `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
     values (?, 'doc', ?, null, 'info', ?, ?, null, ?, 10, 0, now())`,
    [id, LIB, title, content, breadcrumb],
  );
}

beforeAll(async () => {
  stack = await startTestStack({ api: false, queues: [] });
  await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, created_at, updated_at) values (?, 'Ranking', 'local', '/ranking', 'indexed', 0, 5, now(), now())`, [LIB]);
  await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('doc', ?, 'README.md', 'x', now())`, [LIB]);
  // "app" is everywhere, "websocket" in two snippets: the rare word decides, even against a title match.
  for (let i = 0; i < 60; i++) await snippet(`app${String(i).padStart(2, '0')}`, `App settings ${i}`, `Configure the app with options for part ${i} of the app.`);
  await snippet('ws-body', 'Realtime', 'Accept websocket connections on the same port as the HTTP server; each websocket gets a handler.');
  await snippet('ws-other', 'Upgrades', 'A websocket upgrade request is answered by the upgrade handler of the app.');
  // Stems: "scaling" and "connection" find "scale" and "connections"; identifiers match exactly and split.
  await snippet('scale', 'Capacity', 'Scale the workers out when the queue grows; each worker keeps two connections.');
  await snippet('hook', 'Effects', 'Call useEffect(() => subscribe(), []) to run the effect after rendering.');
  // List numbering is not a number: "5 seconds" finds the timeout, not step 5.
  await snippet('steps', '5. Deploy', '1. Build the image\n2. Push it\n5. Restart the service with the new image');
  await snippet('timeout', 'Timeouts', 'The client gives up after 5 seconds without an answer.');
  await snippet('legacy', 'Old sockets', 'websocket support in the legacy transport');
  // An identifier made of common words: its split phrase is rare though both of its words are everywhere.
  await snippet('ident', 'Hooks', 'Read them with the settingsApp helper.');
  await sql(`update library set total_snippets = (select count(*) from snippet where repository_id = ?) where id = ?`, [LIB, LIB]);
});

afterAll(async () => {
  await stack?.stop();
});

describe('keyword ranking', () => {
  it('weighs terms by rarity: a rare word in a body beats a common word in a title', async () => {
    const ranked = await ids('How do I accept websocket connections in my app?');
    expect(ranked.slice(0, 2)).toEqual(['ws-body', 'ws-other']);
    // Every snippet with either word is there, each once, scores falling.
    expect(new Set(ranked).size).toBe(ranked.length);
    const scores = (await search('websocket app')).map((r) => r.score);
    for (let i = 1; i < scores.length; i++) expect(scores[i]!).toBeLessThanOrEqual(scores[i - 1]!);
  });

  it('matches English stems beside exact identifiers', async () => {
    expect((await ids('scaling')).slice(0, 1)).toEqual(['scale']);
    expect(await ids('connection')).toEqual(expect.arrayContaining(['scale', 'ws-body']));
    expect((await ids('useEffect'))[0]).toBe('hook');
    expect((await ids('use effect'))[0]).toBe('hook'); // the identifier split
  });

  it('does not match a bare number against list numbering', async () => {
    expect((await ids('5 seconds'))[0]).toBe('timeout');
    expect(await ids('5')).not.toContain('steps');
    expect((await ids('restart the service'))[0]).toBe('steps'); // the list's text is still there
  });

  it('leaves out excluded words and phrases', async () => {
    expect(await ids('websocket')).toContain('legacy');
    expect(await ids('websocket -legacy')).not.toContain('legacy');
    expect(await ids('websocket -"legacy transport"')).not.toContain('legacy');
    expect(await ids('websocket -"legacy transport"')).toContain('ws-body');
  });

  it('searches for a command-line option instead of excluding it', async () => {
    await snippet('flags', 'Output', 'Pass --verbose (or -v) to print each request as it is sent.');
    try {
      expect((await ids('print more with --verbose'))[0]).toBe('flags');
      expect((await ids('what does -v print'))[0]).toBe('flags');
      expect(await ids('print -verbose')).not.toContain('flags'); // a word after one dash is still an exclusion
    } finally {
      await sql(`delete from snippet where id = 'flags'`);
    }
  });

  it('reads at most `candidates` matches of a common word, and still ranks every match of a rare one', async () => {
    const capped = await ids('app websocket', 50, 20);
    expect(capped).toEqual(expect.arrayContaining(['ws-body', 'ws-other']));
    expect(capped.length).toBeLessThanOrEqual(2 + 20);
    expect(await ids('app', 100, 10)).toHaveLength(10);
    // A word that fills its share is common, though only its share was counted: it weighs little beside a rare one.
    const scores = new Map((await search('app websocket', 50, 20)).map((r) => [r.id, r.score]));
    expect(scores.get('app00')!).toBeLessThan(scores.get('ws-body')! / 2);
  });

  it('takes a huge query without planning a huge statement: the first distinct terms count', async () => {
    const words = Array.from({ length: 4000 }, (_, i) => `zq${i}`);
    expect(await ids(['websocket', ...words].join(' '))).toEqual(await ids('websocket'));
  });

  it('answers the same order for equal scores, by snippet id', async () => {
    const first = await ids('settings');
    expect(first.length).toBeGreaterThan(10);
    expect(await ids('settings')).toEqual(first);
  });
});

describe('keyword ranking with the term statistics an indexing run stores', () => {
  beforeAll(async () => {
    await refreshTermStatistics(stack.orm.em.fork(), scope);
  });
  afterAll(async () => {
    await sql(`delete from search_term where repository_id = ?`, [LIB]);
  });

  it('stores how many snippets hold each lexeme held by at least MIN_TERM_SNIPPETS, and rewrites rather than adds', async () => {
    const stored = async () => new Map(((await sql(`select lexeme, snippets from search_term where repository_id = ?`, [LIB])) as { lexeme: string; snippets: number }[]).map((r) => [r.lexeme, r.snippets]));
    const terms = await stored();
    expect(terms.get('app')).toBe(62); // 60 "App settings" snippets, ws-other and ident (settingsApp, split)
    expect(terms.get('settings')).toBe(61);
    expect(terms.get('set')).toBe(60); // its English stem, stored beside the word as written
    expect(terms.has('websocket')).toBe(false); // 3 snippets: rare, counted at query time
    expect(Math.min(...terms.values())).toBeGreaterThanOrEqual(MIN_TERM_SNIPPETS);
    await refreshTermStatistics(stack.orm.em.fork(), scope);
    expect(await stored()).toEqual(terms);
  });

  it('ranks as without them: the rare word decides, every match of it is read, a common word costs its share', async () => {
    expect((await ids('How do I accept websocket connections in my app?')).slice(0, 2)).toEqual(['ws-body', 'ws-other']);
    const capped = await ids('app websocket', 50, 20);
    expect(capped).toEqual(expect.arrayContaining(['ws-body', 'ws-other', 'legacy']));
    expect(capped.length).toBeLessThanOrEqual(3 + 10);
    expect(await ids('app', 100, 10)).toHaveLength(10);
    expect((await ids('scaling'))[0]).toBe('scale');
    expect(await ids('websocket -legacy')).not.toContain('legacy');
  });

  it('takes a phrase of common words for what it is, not for as common as its words', async () => {
    // "settingsApp" also matches as the phrase "settings app", whose words 60 snippets hold; the phrase only one.
    const [hit, ...rest] = await search('settingsApp', 50, 20);
    expect(hit!.id).toBe('ident');
    expect(rest).toEqual([]);
    expect(hit!.score).toBeGreaterThan(1); // idf of 1 snippet in 68 is 3.8; taken as held by 60, it would be 0.13
  });

  it('weighs a common word by its stored frequency', async () => {
    // idf = ln(1 + (N - df + 0.5) / (df + 0.5)): with df 62 of 68 snippets, "app" weighs about a thirtieth of
    // "websocket" (3 snippets), where without statistics a word filling its share counted as held by half of them.
    const scores = new Map((await search('app websocket', 50, 20)).map((r) => [r.id, r.score]));
    expect(scores.get('ws-other')! - scores.get('legacy')!).toBeLessThan(scores.get('ws-body')! / 5);
    const app = (await search('app', 1, 10))[0]!.score;
    expect(app).toBeGreaterThan(0);
    expect(app).toBeLessThan(Math.log(1 + 6.5 / 62.5) * 2.2 + 1e-9);
  });
});
