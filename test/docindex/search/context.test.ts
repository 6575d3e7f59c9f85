import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, enc, expectError, waitForJob } from '../helpers.js';
import { TestRepo } from '../../support/git.js';
import { startTestStack, type TestStack } from '../../support/stack.js';
import { buildTinyModel } from '../../../fakes/tiny-model.js';
import { parseServerTiming } from '../../../docindex/search/timings.js';
import { contextParams, retrieveContext } from '../../../docindex/search/context.js';
import { createLogger } from '../../../core/log.js';
import { activeEmbeddingProvider } from '../../../docindex/embeddings/profiles.js';

let tmp: string;
let stack: TestStack;
let repo: TestRepo;
let v1Commit: string;
let modelPath: string;
const LIB = '/local/widget-kit';

const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);
const ctx = (params: Record<string, string>) => api(stack, 'GET', `/api/v1/context?${new URLSearchParams(params)}`);
async function text(p: string) {
  const res = await fetch(`${stack.url}${p}`);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-search-'));
  const model = await buildTinyModel(tmp);
  modelPath = model.path;
  stack = await startTestStack({ env: { EMBEDDING_MODEL_PATH: model.path } });
  repo = new TestRepo(path.join(tmp, 'widget-kit'));
  repo.write({
    'gristmill.json': JSON.stringify({ rules: ['Version one rules: call legacyMount before rendering.'] }),
    'README.md': '# Widget Kit\n\nWidget Kit renders widgets.\n\n## Legacy mounting\n\nCall legacyMount(element) to attach a widget in version one of the kit.\n',
  });
  v1Commit = repo.commit('v1');
  repo.tag('v1.0.0');
  repo.write({
    'gristmill.json': null,
    'README.md': '# Widget Kit\n\nWidget Kit renders widgets.\n\n## Mounting\n\nCall mountWidget(element) to attach a widget in version two.\n',
  });
  repo.commit('v2');
  repo.tag('v2.0.0');
  repo.write({
    'gristmill.json': JSON.stringify({ rules: ['Always configure the router before rendering widgets.'] }),
    'README.md':
      '# Widget Kit\n\nWidget Kit renders widgets in the browser with a small router and a data cache.\n\n' +
      '## Installation\n\ninstall installation setup configure the widget config with npm and the setup wizard.\n\n```bash\nnpm install widget-kit\n```\n',
    'docs/hooks.md':
      '# Hooks\n\n## The effect hook\n\nThe useEffect hook runs after rendering; return a cleanup function from it to undo side effects.\n\n' +
      '```tsx\nuseEffect(() => {\n  const id = subscribe();\n  return () => unsubscribe(id);\n}, []);\n```\n',
    'docs/config.md':
      '# Reading configuration files\n\nThe parse_config helper reads widget.toml and returns a plain object with every key lower-cased.\n\n' +
      '```python\nsettings = parse_config("widget.toml")\nprint(settings["theme"])\n```\n',
    'docs/navigation.md':
      '# Navigation\n\nCall Router.navigate with a path to change pages; it pushes a history entry and renders the new page.\n\n' +
      '```ts\nRouter.navigate("/settings/profile");\n```\n',
    'docs/auth.md': '# Signing in\n\nauthentication token auth: the client sends the token with every request after authentication succeeds on the server.\n',
    'docs/caching.md': '# Caching\n\ncache caching data: responses from the server are kept in a data cache in memory until the page reloads.\n',
    'docs/errors.md': '# Failures\n\nerror errors handle handling: handle every error of a request and show the errors to the user.\n',
  });
  repo.commit('main');
  const lib = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir });
  expect(lib.status, JSON.stringify(lib.body)).toBe(201);
  expect((await waitForJob(stack, lib.body.job.id)).status).toBe('done');
  for (const tag of ['v1.0.0', 'v2.0.0']) {
    const v = await api(stack, 'POST', `/api/v1/libs/${enc(LIB)}/versions`, { tag, autoIndex: true });
    expect(v.status, JSON.stringify(v.body)).toBe(201);
    expect((await waitForJob(stack, v.body.job.id)).status).toBe('done');
  }
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('GET /api/v1/context', () => {
  it('answers the JSON shape for the default branch', async () => {
    const res = await ctx({ libraryId: LIB, query: 'useEffect cleanup', searchMode: 'keyword' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const b = res.body;
    expect(Object.keys(b).sort()).toEqual(['localSource', 'repository', 'reranked', 'resultCount', 'rules', 'searchMode', 'snippets', 'version', 'versionTags']);
    expect(b.searchMode).toBe('keyword');
    expect(b.reranked).toBe(false); // no rerank server is configured
    expect(b.resultCount).toBe(b.snippets.length);
    expect(b.snippets[0]).toMatchObject({ filePath: 'docs/hooks.md', versionId: null });
    expect(Object.keys(b.snippets[0]).sort()).toEqual(['breadcrumb', 'content', 'filePath', 'id', 'language', 'score', 'title', 'tokenCount', 'type', 'versionId']);
    // Which version the answer comes from (a folder: its commit) and when it was indexed.
    expect(b.repository).toEqual({
      id: LIB, title: expect.any(String), source: 'local', sourceUrl: repo.dir, branch: null,
      indexedVersion: expect.stringMatching(/^[0-9a-f]{12}$/), indexedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(b.localSource).toBe(true);
    expect(b.version).toBeNull();
    expect(b.versionTags).toEqual({});
    expect(b.rules).toEqual(['Always configure the router before rendering widgets.']);
    expect(JSON.stringify(b)).not.toMatch(/"[a-z]+_[a-z_]+":/); // camelCase only
  });

  it('checks parameters in the spec order with {error, code} bodies', async () => {
    expectError(await ctx({ query: 'x' }), 400, 'MISSING_PARAMETER');
    expectError(await ctx({ libraryId: '   ', query: 'x' }), 400, 'MISSING_PARAMETER');
    const both = await ctx({});
    expectError(both, 400, 'MISSING_PARAMETER');
    expect(both.body.error).toMatch(/libraryId/);
    const q = await ctx({ libraryId: '/nobody/nothing', query: '  ' }); // query is checked before the library exists
    expectError(q, 400, 'MISSING_PARAMETER');
    expect(q.body.error).toMatch(/query/);
    expectError(await ctx({ libraryId: 'not-a-library-id', query: 'x' }), 400, 'MISSING_PARAMETER');
    expectError(await ctx({ libraryId: '/nobody/nothing', query: 'x' }), 404, 'LIBRARY_NOT_FOUND');
    expectError(await ctx({ libraryId: '/nobody/nothing/v9', query: 'x' }), 404, 'LIBRARY_NOT_FOUND');
    expectError(await ctx({ libraryId: `${LIB}/v9.9.9`, query: 'x' }), 404, 'VERSION_NOT_FOUND');
    // Coercions never reject.
    const coerced = await ctx({ libraryId: LIB, query: 'router', tokens: 'lots', searchMode: 'fuzzy', alpha: 'high', type: 'xml' });
    expect(coerced.status).toBe(200);
    expect(coerced.body.searchMode).toBe('hybrid'); // fuzzy -> auto -> hybrid (a provider is active)
    expect((await ctx({ libraryId: LIB, query: 'router', alpha: '7', searchMode: 'hybrid' })).status).toBe(200);
  });

  it('resolves versions by tag and by commit prefix, scopes search and selects rules', async () => {
    const v1 = await ctx({ libraryId: `${LIB}/v1.0.0`, query: 'legacyMount', searchMode: 'keyword' });
    expect(v1.status, JSON.stringify(v1.body)).toBe(200);
    expect(v1.body.version).toEqual({ requested: 'v1.0.0', resolved: 'v1.0.0', id: `${LIB}/v1.0.0` });
    expect(v1.body.resultCount).toBeGreaterThan(0);
    expect(v1.body.snippets.every((s: { versionId: string }) => s.versionId === `${LIB}/v1.0.0`)).toBe(true);
    expect(v1.body.versionTags).toEqual({ [`${LIB}/v1.0.0`]: 'v1.0.0' });
    expect(v1.body.rules).toEqual(['Version one rules: call legacyMount before rendering.']);
    // Never from another version: the default branch and v2 do not have legacyMount.
    expect((await ctx({ libraryId: LIB, query: 'legacyMount', searchMode: 'keyword' })).body.resultCount).toBe(0);
    const v2 = await ctx({ libraryId: `${LIB}/v2.0.0`, query: 'legacyMount', searchMode: 'keyword' });
    expect(v2.body.resultCount).toBe(0);
    expect(v2.body.rules).toEqual([]); // v2 has no rules row, even though the repository-wide row exists
    const byCommit = await ctx({ libraryId: `${LIB}/${v1Commit.slice(0, 7)}`, query: 'legacyMount', searchMode: 'keyword' });
    expect(byCommit.status, JSON.stringify(byCommit.body)).toBe(200);
    expect(byCommit.body.version).toEqual({ requested: v1Commit.slice(0, 7), resolved: 'v1.0.0', id: `${LIB}/v1.0.0` });
    expectError(await ctx({ libraryId: `${LIB}/${v1Commit.slice(0, 6)}`, query: 'legacyMount' }), 404, 'VERSION_NOT_FOUND');
  });

  it('applies the token budget only with txt or a tokens parameter, keeping a single oversized snippet', async () => {
    const all = await ctx({ libraryId: LIB, query: 'widget', searchMode: 'keyword' });
    expect(all.body.resultCount).toBeGreaterThan(2);
    const one = await ctx({ libraryId: LIB, query: 'widget', searchMode: 'keyword', tokens: '1' });
    expect(one.body.resultCount).toBe(1); // over the budget alone, still kept
    expect(one.body.snippets[0].id).toBe(all.body.snippets[0].id);
    const first2 = all.body.snippets[0].tokenCount + all.body.snippets[1].tokenCount;
    const two = await ctx({ libraryId: LIB, query: 'widget', searchMode: 'keyword', tokens: String(first2) });
    expect(two.body.snippets.map((s: { id: string }) => s.id)).toEqual(all.body.snippets.slice(0, 2).map((s: { id: string }) => s.id));
    const invalid = await ctx({ libraryId: LIB, query: 'widget', searchMode: 'keyword', tokens: '0' }); // becomes 10000
    expect(invalid.body.resultCount).toBe(all.body.resultCount);
  });

  it('runs each search mode, and falls back to keyword without a provider', async () => {
    const modes: Record<string, string> = { keyword: 'keyword', semantic: 'semantic', hybrid: 'hybrid', auto: 'hybrid' };
    for (const [asked, used] of Object.entries(modes)) {
      const res = await ctx({ libraryId: LIB, query: 'routing', searchMode: asked });
      expect(res.status).toBe(200);
      expect(res.body.searchMode).toBe(used);
    }
    await sql(`update embedding_profile set enabled = false`);
    try {
      for (const asked of ['semantic', 'hybrid']) {
        const res = await ctx({ libraryId: LIB, query: 'Router.navigate', searchMode: asked });
        expect(res.body.searchMode).toBe('keyword_fallback');
        expect(res.body.snippets[0].filePath).toBe('docs/navigation.md');
      }
      expect((await ctx({ libraryId: LIB, query: 'router', searchMode: 'auto' })).body.searchMode).toBe('keyword');
    } finally {
      await sql(`update embedding_profile set enabled = true`);
    }
  });

  it('answers text: rules first, results, repository and count; and the no-match text', async () => {
    const res = await text(`/api/v1/context?${new URLSearchParams({ libraryId: LIB, query: 'useEffect', type: 'txt', searchMode: 'keyword' })}`);
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/plain; charset=utf-8');
    expect(res.body.startsWith('## Rules\n\n- Always configure the router before rendering widgets.')).toBe(true);
    expect(res.body.indexOf('## Context Results')).toBeGreaterThan(0);
    expect(res.body).toContain('useEffect(() => {');
    expect(res.body).toMatch(/Repository: .+ \(\/local\/widget-kit\)\nResult count: [1-9]\d*\nIndexed: [0-9a-f]{12}, \d{4}-\d\d-\d\d \d\d:\d\d UTC\n$/);
    const none = await text(`/api/v1/context?${new URLSearchParams({ libraryId: `${LIB}/v2.0.0`, query: 'zebra', type: 'txt', searchMode: 'keyword' })}`);
    expect(none.body).toContain('## Context Results\n\nNo matching snippets found');
    expect(none.body).toMatch(/Repository: .+ \(\/local\/widget-kit\)/);
    expect(none.body).toContain('Result count: 0');
    expect(none.body).not.toContain('## Rules');
  });

  it('widens text results to their section within the budget, and says nothing twice', async () => {
    const q = (tokens: string) => text(`/api/v1/context?${new URLSearchParams({ libraryId: LIB, query: 'cleanup function', type: 'txt', searchMode: 'keyword', tokens })}`);
    const json = await ctx({ libraryId: LIB, query: 'cleanup function', searchMode: 'keyword' });
    const hit = json.body.snippets[0];
    expect(hit.filePath).toBe('docs/hooks.md');
    const wide = await q('10000');
    // The hit (prose or code) comes with the rest of its section: the sentence and the tsx block, once each.
    const section = wide.body.slice(wide.body.indexOf('### '), wide.body.indexOf('\n\n' + '-'.repeat(40)) >>> 0);
    expect(section).toContain('return a cleanup function from it');
    expect(section).toContain('```tsx\nuseEffect(() => {');
    expect(wide.body.split('return a cleanup function from it').length).toBe(2);
    expect(wide.body.split('const id = subscribe();').length).toBe(2);
    // A budget that holds only the hit keeps it alone, as before.
    const narrow = await q(String(hit.tokenCount));
    expect(narrow.body).toContain('Result count: 1');
    expect(narrow.body).toContain(hit.content.split('\n')[0]);
    // (a code block's title is the sentence before it, without its final period)
    expect(narrow.body.includes('to undo side effects.') && narrow.body.includes('```tsx\nuseEffect')).toBe(false);
    expect(wide.body).toContain('to undo side effects.');
  });

  it('answers 503 INDEXING_IN_PROGRESS while the library is pending or indexing', async () => {
    for (const state of ['pending', 'indexing']) {
      await sql(`update library set state = ? where id = ?`, [state, LIB]);
      try {
        expectError(await ctx({ libraryId: LIB, query: 'router' }), 503, 'INDEXING_IN_PROGRESS');
      } finally {
        await sql(`update library set state = 'indexed' where id = ?`, [LIB]);
      }
    }
  });

  it('has CORS headers, and OPTIONS answers 204', async () => {
    const res = await fetch(`${stack.url}/api/v1/context`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Content-Type, Authorization/);
    const get = await fetch(`${stack.url}/api/v1/context?libraryId=${enc(LIB)}&query=router`);
    expect(get.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('says where its time went in Server-Timing: phase names and durations only', async () => {
    const phases = async (p: string) => {
      const res = await fetch(`${stack.url}${p}`);
      expect(res.status, await res.text()).toBe(200);
      const header = res.headers.get('server-timing') ?? '';
      // Nothing of the query, the library or the data: `name;dur=<ms>` entries only.
      for (const entry of header.split(', ')) expect(entry).toMatch(/^[a-z]+;dur=\d+\.\d$/);
      return parseServerTiming(header);
    };
    const keyword = await phases(`/api/v1/context?${new URLSearchParams({ libraryId: LIB, query: 'useEffect cleanup', searchMode: 'keyword' })}`);
    expect([...keyword.keys()]).toEqual(['resolve', 'keyword', 'rerank', 'load', 'budget', 'serialise', 'total']);
    const sum = [...keyword].filter(([name]) => name !== 'total').reduce((a, [, ms]) => a + ms, 0);
    expect(keyword.get('total')!).toBeGreaterThanOrEqual(sum - 0.5); // rounding of each entry
    const hybrid = await phases(`/api/v1/context?${new URLSearchParams({ libraryId: `${LIB}/v1.0.0`, query: 'legacyMount', searchMode: 'hybrid', type: 'txt' })}`);
    expect([...hybrid.keys()].sort()).toEqual(['embed', 'fuse', 'keyword', 'load', 'profile', 'rerank', 'resolve', 'scan', 'semantic', 'serialise', 'total', 'widen']);
    const v2 = await phases(`/api/v2/context?${new URLSearchParams({ libraryId: LIB, query: 'useEffect', searchMode: 'semantic' })}`);
    expect([...v2.keys()]).toEqual(['resolve', 'profile', 'embed', 'scan', 'semantic', 'rerank', 'load', 'widen', 'serialise', 'total']);
    // Parts of `semantic`, ended before it: together no longer than it (each entry rounded to 0.1 ms).
    expect(v2.get('embed')! + v2.get('scan')!).toBeLessThanOrEqual(v2.get('semantic')! + 0.2);
  });

  it('reads the active embedding profile in the query that resolves the scope, not in one of its own', async () => {
    const connection = stack.orm.em.getConnection();
    const execute = connection.execute;
    const statements: string[] = [];
    connection.execute = function (this: typeof connection, ...args: Parameters<typeof execute>) {
      statements.push(String(args[0]));
      return execute.apply(this, args);
    } as typeof execute;
    try {
      const deps = { config: stack.config, orm: stack.orm, log: createLogger('warn') };
      for (const libraryId of [LIB, `${LIB}/v1.0.0`]) {
        statements.length = 0;
        const r = await retrieveContext(deps, contextParams({ libraryId, query: 'routing mount', searchMode: 'hybrid' }));
        expect(r.searchMode).toBe('hybrid');
        const profile = statements.filter((q) => /from embedding_profile/.test(q));
        expect(profile, statements.join('\n')).toHaveLength(1);
        expect(profile[0]).toMatch(/from library l/);
      }
    } finally {
      connection.execute = execute;
    }
  });

  it('embeds a question asked again once, in one library or several (docindex/search/query-vectors.ts)', async () => {
    const provider = (await activeEmbeddingProvider(stack.orm.em.fork(), stack.config))!;
    const embed = provider.embed;
    const embedded: string[] = [];
    provider.embed = function (this: typeof provider, texts, signal) {
      embedded.push(...texts);
      return embed.call(this, texts, signal);
    };
    try {
      const ask = (libraryId: string) => ctx({ libraryId, query: 'effect hook cleanup, asked again', searchMode: 'hybrid' });
      const first = await ask(LIB);
      expect(first.status).toBe(200);
      expect(first.body.searchMode).toBe('hybrid');
      const again = await ask(LIB);
      expect(again.body.snippets).toEqual(first.body.snippets);
      expect((await ask(`${LIB},${LIB}/v1.0.0`)).body.searchMode).toBe('hybrid');
      expect(embedded).toEqual(['effect hook cleanup, asked again']);
    } finally {
      provider.embed = embed;
    }
  });

  it('answers a version being indexed 503 from the path that checks state, and reads it again once indexed', async () => {
    await sql(`update library_version set state = 'indexing' where id = ?`, [`${LIB}/v1.0.0`]);
    try {
      expectError(await ctx({ libraryId: `${LIB}/v1.0.0`, query: 'legacyMount' }), 503, 'INDEXING_IN_PROGRESS');
    } finally {
      await sql(`update library_version set state = 'indexed' where id = ?`, [`${LIB}/v1.0.0`]);
    }
    expect((await ctx({ libraryId: `${LIB}/v1.0.0`, query: 'legacyMount', searchMode: 'keyword' })).body.resultCount).toBeGreaterThan(0);
  });
});

describe('search quality (labelled queries, expected snippet in the top 3)', () => {
  const labelled: { query: string; file: string; modes: string[] }[] = [
    { query: 'useEffect', file: 'docs/hooks.md', modes: ['keyword', 'hybrid'] },
    { query: 'effect hook cleanup', file: 'docs/hooks.md', modes: ['keyword', 'hybrid'] },
    { query: 'parse_config', file: 'docs/config.md', modes: ['keyword', 'hybrid'] },
    { query: 'parse config', file: 'docs/config.md', modes: ['keyword'] },
    { query: 'Router.navigate', file: 'docs/navigation.md', modes: ['keyword', 'hybrid'] },
    { query: 'navigate', file: 'docs/navigation.md', modes: ['keyword'] },
    { query: 'login', file: 'docs/auth.md', modes: ['semantic', 'hybrid'] },
    { query: 'how do i setup', file: 'README.md', modes: ['semantic', 'hybrid'] },
    { query: 'caching', file: 'docs/caching.md', modes: ['keyword', 'semantic', 'hybrid'] },
    { query: 'handling', file: 'docs/errors.md', modes: ['keyword', 'semantic', 'hybrid'] },
  ];
  for (const { query, file, modes } of labelled) {
    for (const mode of modes) {
      it(`${mode}: "${query}" -> ${file}`, async () => {
        const res = await ctx({ libraryId: LIB, query, searchMode: mode });
        expect(res.body.searchMode).toBe(mode);
        const top = res.body.snippets.slice(0, 3).map((s: { filePath: string }) => s.filePath);
        expect(top, JSON.stringify(res.body.snippets.map((s: { filePath: string; title: string }) => [s.filePath, s.title]))).toContain(file);
      });
    }
  }

  it('keyword search does not find what semantic finds by meaning only', async () => {
    const res = await ctx({ libraryId: LIB, query: 'login', searchMode: 'keyword' });
    expect(res.body.snippets.map((s: { filePath: string }) => s.filePath)).not.toContain('docs/auth.md');
  });

  it('ties and order are deterministic', async () => {
    const a = await ctx({ libraryId: LIB, query: 'widget', searchMode: 'hybrid' });
    const b = await ctx({ libraryId: LIB, query: 'widget', searchMode: 'hybrid' });
    expect(a.body.snippets.map((s: { id: string }) => s.id)).toEqual(b.body.snippets.map((s: { id: string }) => s.id));
  });
});

describe('Context7-compatible endpoints', () => {
  it('GET /api/v1/libs/search and /api/v2/libs/search rank libraries by name', async () => {
    for (const v of ['v1', 'v2']) {
      const res = await api(stack, 'GET', `/api/${v}/libs/search?libraryName=widget&query=router`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.searchFilterApplied).toBe(true);
      expect(res.body.results).toHaveLength(1);
      const r = res.body.results[0];
      expect(Object.keys(r).sort()).toEqual(
        // Context7's fields, and ours: where the library comes from and the version its default scope holds.
        ['benchmarkScore', 'branch', 'description', 'id', 'indexedVersion', 'lastUpdateDate', 'source', 'state', 'stars', 'title', 'totalSnippets', 'totalTokens', 'trustScore', 'versions'].sort(),
      );
      expect(r).toMatchObject({ id: LIB, state: 'finalized', versions: ['v1.0.0', 'v2.0.0'] });
      expect(r.totalTokens).toBeGreaterThan(0);
      expect((await api(stack, 'GET', `/api/${v}/libs/search?libraryName=zzzz&query=x`)).body.results).toEqual([]);
      const bad = await api(stack, 'GET', `/api/${v}/libs/search`);
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'validation_error', message: expect.any(String) });
    }
  });

  it('GET /api/v2/context answers txt by default, json on request, and versions as /v or @v', async () => {
    const txt = await text(`/api/v2/context?${new URLSearchParams({ libraryId: LIB, query: 'useEffect' })}`);
    expect(txt.status).toBe(200);
    expect(txt.type).toBe('text/plain; charset=utf-8');
    // The code block comes with the prose of its section (results read as text carry their neighbourhood).
    expect(txt.body).toMatch(/### Hooks > The effect hook\n\nSource: .+docs\/hooks\.md\n\nThe useEffect hook runs after rendering.*\n\n```tsx\nuseEffect/);
    const json = await api(stack, 'GET', `/api/v2/context?${new URLSearchParams({ libraryId: LIB, query: 'useEffect', type: 'json' })}`);
    expect(Object.keys(json.body).sort()).toEqual(['codeSnippets', 'infoSnippets', 'rules']);
    expect(Object.keys(json.body.codeSnippets[0]).sort()).toEqual(['codeDescription', 'codeId', 'codeLanguage', 'codeList', 'codeTitle', 'codeTokens', 'pageTitle']);
    expect(json.body.codeSnippets[0].codeList[0]).toEqual({ language: 'tsx', code: expect.stringContaining('useEffect') });
    if (json.body.infoSnippets.length) expect(Object.keys(json.body.infoSnippets[0]).sort()).toEqual(['breadcrumb', 'content', 'contentTokens', 'pageId']);
    expect(json.body.rules).toEqual({ global: [], libraryOwn: ['Always configure the router before rendering widgets.'], libraryTeam: [] });
    for (const id of [`${LIB}/v1.0.0`, `${LIB}@v1.0.0`]) {
      const v = await text(`/api/v2/context?${new URLSearchParams({ libraryId: id, query: 'legacyMount' })}`);
      expect(v.status, v.body).toBe(200);
      expect(v.body).toContain('legacyMount');
    }
  });

  it('GET /api/v2/context errors are {error, message} with Context7 codes', async () => {
    const cases: [Record<string, string>, number, string][] = [
      [{ query: 'x' }, 400, 'validation_error'],
      [{ libraryId: LIB }, 400, 'validation_error'],
      [{ libraryId: 'widget-kit', query: 'x' }, 400, 'invalid_library_id'],
      [{ libraryId: '/nobody/nothing', query: 'x' }, 404, 'library_not_found'],
      [{ libraryId: `${LIB}@v9`, query: 'x' }, 404, 'tag_not_found'],
      [{ libraryId: LIB, query: 'zebra', searchMode: 'keyword' }, 404, 'no_snippets_found'],
    ];
    for (const [params, status, code] of cases) {
      const res = await api(stack, 'GET', `/api/v2/context?${new URLSearchParams(params)}`);
      expect(res.status, JSON.stringify([params, res.body])).toBe(status);
      expect(res.body).toEqual({ error: code, message: expect.any(String) });
    }
    await sql(`update library set state = 'indexing' where id = ?`, [LIB]);
    try {
      const res = await api(stack, 'GET', `/api/v2/context?${new URLSearchParams({ libraryId: LIB, query: 'x' })}`);
      expect(res.status).toBe(202);
      expect(res.body.error).toBe('library_not_finalized');
    } finally {
      await sql(`update library set state = 'indexed' where id = ?`, [LIB]);
    }
    const unknown = await api(stack, 'GET', '/api/v2/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not_found', message: expect.any(String) });
  });
});

describe('MCP', () => {
  async function exercise(client: Client) {
    const tools = await client.listTools();
    // Registering a project's dependencies starts jobs: offered wherever Temporal answers (both, here).
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['index-dependencies', 'query-docs', 'resolve-library-id']);
    const resolved = await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widget-kit', query: 'routing' } });
    const resolvedText = (resolved.content as { text: string }[])[0]!.text;
    expect(resolvedText).toMatch(/^Available Libraries:/);
    expect(resolvedText).toContain(`- Context7-compatible library ID: ${LIB}`);
    expect(resolvedText).toContain('- Versions: v1.0.0, v2.0.0');
    const none = await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'zzzz', query: 'x' } });
    expect((none.content as { text: string }[])[0]!.text).toBe('No libraries found matching the provided name.');
    const docs = await client.callTool({ name: 'query-docs', arguments: { libraryId: LIB, query: 'useEffect', searchMode: 'keyword', tokens: 5000 } });
    expect((docs.content as { text: string }[])[0]!.text).toContain('useEffect(() => {');
    // Aliases Context7 clients send.
    const alias = await client.callTool({ name: 'query-docs', arguments: { context7CompatibleLibraryID: `${LIB}@v1.0.0`, userQuery: 'legacyMount', alpha: 0 } });
    expect((alias.content as { text: string }[])[0]!.text).toContain('legacyMount');
    const alias2 = await client.callTool({ name: 'query-docs', arguments: { libraryID: LIB, question: 'Router.navigate', searchMode: 'hybrid', alpha: 0.3 } });
    expect((alias2.content as { text: string }[])[0]!.text).toContain('Router.navigate');
    const missing = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/nobody/nothing', query: 'x' } });
    expect(missing.isError).toBe(true);
    expect((missing.content as { text: string }[])[0]!.text).toMatch(/LIBRARY_NOT_FOUND/);
  }

  it('serves both tools over streamable HTTP at /mcp', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  it('serves both tools over stdio (npm run mcp)', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', 'bin/mcp.ts'],
        cwd: path.resolve(import.meta.dirname, '../../..'),
        env: { ...env, DATABASE_URL: stack.databaseUrl, DATA_DIR: stack.dataDir, TEMPORAL_ADDRESS: stack.config.temporalAddress!, LOG_LEVEL: 'info', EMBEDDING_MODEL_PATH: modelPath },
        stderr: 'ignore',
      }),
    );
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  }, 60_000);
});
