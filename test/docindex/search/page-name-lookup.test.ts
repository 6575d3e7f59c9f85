import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keywordSearch } from '../../../docindex/search/keyword.js';
import { loadKeywordIndex, searchKeywordIndex } from '../../../docindex/search/keyword-index.js';
import { declarationPages, pageNames, rememberScopePages } from '../../../docindex/search/page-name-lookup.js';
import { loadScopeKeywordIndex } from '../../../docindex/search/search.js';
import { createLogger } from '../../../core/log.js';
import { startTestStack, type TestStack } from '../../support/stack.js';

/**
 * A documentation page named for a query term (docindex/search/page-names.ts, evidence.ts) is credited, and a type
 * declaration file weighed down, in both keyword rankings, the SQL one and the in-process index's, from its file path in
 * library_document.
 */
let stack: TestStack;
const LIB = '/ranking/page-names';
const scope = { repositoryId: LIB, versionId: null };
const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);

async function page(documentId: string, filePath: string, snippets: [string, string, string][]): Promise<void> {
  await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values (?, ?, ?, 'x', now())`, [documentId, LIB, filePath]);
  for (const [id, title, content] of snippets) {
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values (?, ?, ?, null, 'info', ?, ?, null, 'API', 10, 0, now())`,
      [id, documentId, LIB, title, content],
    );
  }
}

beforeAll(async () => {
  stack = await startTestStack({ api: false, queues: [] });
  await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, created_at, updated_at) values (?, 'Names', 'local', '/names', 'indexed', 0, 5, now(), now())`, [LIB]);
  // A page of events that mentions websocket clients often, and the WebSocket page, which says "client" nowhere;
  // "client" is common (the filler pages), "websocket" rare.
  await page('events', 'docs/api/DiagnosticsChannel.md', [['ev', 'Events', 'The websocket client publishes events: websocket open, websocket close; each client event has a socket.']]);
  await page('ws', 'docs/api/WebSocket.md', [['ws', 'Constructor', 'Opens a websocket to the url, with optional protocols.']]);
  await page('dts', 'types/websocket.d.ts', [['decl', 'WebSocket', 'declare class WebSocket { constructor (url: string) } // websocket client']]);
  await page('src', 'lib/websocket.js', [['code', 'connect', 'function connect (url) { return new WebSocket(url) } // websocket']]);
  for (let i = 0; i < 20; i++) await page(`filler${i}`, `docs/filler${i}.md`, [[`f${i}`, 'Other', `Something else for the client, part ${i}.`]]);
});

afterAll(async () => {
  await stack?.stop();
});

describe('page names in keyword ranking', () => {
  it('reads the stems of each page name once, none for a source file', async () => {
    const { namesOf, isDeclaration } = await pageNames(stack.orm.em.fork(), ['ws', 'src', 'ws', 'dts']);
    expect(namesOf('ws')).toContain('websocket');
    expect(namesOf('src')).toEqual([]);
    expect(namesOf('unknown')).toEqual([]);
    expect(['ws', 'src', 'dts', 'unknown'].map(isDeclaration)).toEqual([false, false, true, false]);
  });

  it('reads every page of a scope when its keyword index loads, so its questions read no path', async () => {
    await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('ahead', ?, 'docs/api/Ahead.md', 'x', now())`, [LIB]);
    const em = stack.orm.em.fork();
    const statements: string[] = [];
    const execute = em.execute.bind(em);
    em.execute = ((q: string, ...rest: unknown[]) => {
      statements.push(q);
      return (execute as (...a: unknown[]) => unknown)(q, ...rest);
    }) as typeof em.execute;
    await rememberScopePages(em, { repositoryId: '/nobody', versionId: 'v1' }); // another scope: nothing of this one
    expect((await pageNames(em, ['ahead'])).namesOf('ahead')).toContain('ahead');
    expect(statements.filter((q) => /library_document/.test(q))).toHaveLength(2); // not ahead: read for the question
    statements.length = 0;
    await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('later', ?, 'docs/Widget.md', 'x', now())`, [LIB]);
    const index = await loadScopeKeywordIndex({ config: stack.config, log: createLogger('error') }, em, scope, 'pages-ahead');
    expect(index).toBeDefined();
    statements.length = 0;
    expect((await pageNames(em, ['later', 'ws'])).namesOf('later')).toContain('widget');
    expect(statements).toEqual([]);
  });

  it('puts the page named for a query term first, in SQL and from the index alike', async () => {
    const em = stack.orm.em.fork();
    const fromSql = (await keywordSearch(em, scope, 'websocket client', 10, { candidates: 1000 })).map((r) => r.id);
    expect(fromSql[0]).toBe('ws');
    const index = await loadKeywordIndex(em, scope);
    const fromIndex = (await searchKeywordIndex(em, index, 'websocket client', 10)).map((r) => r.id);
    expect(fromIndex[0]).toBe('ws');
    // Without a term naming it, the page of events, which holds more of the question, stays first.
    expect((await keywordSearch(em, scope, 'websocket client events', 10, { candidates: 1000 }))[0]!.id).toBe('ev');
  });

  it('places a type declaration below the source it declares, in SQL and from the index alike', async () => {
    const em = stack.orm.em.fork();
    const fromSql = (await keywordSearch(em, scope, 'websocket url', 10, { candidates: 1000 })).map((r) => r.id);
    const fromIndex = (await searchKeywordIndex(em, await loadKeywordIndex(em, scope), 'websocket url', 10)).map((r) => r.id);
    expect(fromSql.indexOf('decl')).toBeGreaterThan(fromSql.indexOf('code'));
    expect(fromIndex).toEqual(fromSql);
  });
});

describe('declaration files in semantic ranking', () => {
  it("reads a matrix page's document once, from one of its snippets, and the flag from the documents' cache", async () => {
    const matrix = { pageDocuments: [] as (string | undefined)[] };
    const first = [
      { id: 'decl', page: 3 },
      { id: 'ws', page: 1 },
      { id: 'code', page: 2 },
      { id: 'gone', page: 4 },
    ];
    const isDeclaration = await declarationPages(stack.orm.em.fork(), first, matrix);
    expect(first.map(isDeclaration)).toEqual([true, false, false, false]);
    expect(matrix.pageDocuments[3]).toBeDefined();
    expect(matrix.pageDocuments[4]).toBeUndefined();
    // Known by its page number from then on: another snippet of page 3 (here one that is not even stored) reads nothing.
    const later = await declarationPages(stack.orm.em.fork(), [{ id: 'not-stored', page: 3 }], matrix);
    expect(later({ id: 'not-stored', page: 3 })).toBe(true);
    // Another matrix numbers its pages its own way.
    const other = await declarationPages(stack.orm.em.fork(), [{ id: 'ws', page: 3 }], { pageDocuments: [] });
    expect(other({ id: 'ws', page: 3 })).toBe(false);
  });

  it('takes the document a candidate carries (pgvector reads it with the candidate)', async () => {
    const em = stack.orm.em.fork();
    const [decl, ws] = (await em.execute(`select document_id from snippet where id in ('decl', 'ws') order by id`)) as { document_id: string }[];
    const candidates = [
      { id: 'decl', page: 0, documentId: decl!.document_id },
      { id: 'ws', page: 1, documentId: ws!.document_id },
      { id: 'gone', page: 2, documentId: 'no-such-document' },
    ];
    const isDeclaration = await declarationPages(em, candidates);
    expect(candidates.map(isDeclaration)).toEqual([true, false, false]);
  });
});
