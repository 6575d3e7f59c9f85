import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { api, enc, expectError, waitForJob } from '../helpers.js';
import { TestRepo } from '../../support/git.js';
import { startTestStack, type TestStack } from '../../support/stack.js';
import { buildTinyModel } from '../../../fakes/tiny-model.js';
import { parseLibraryRefList } from '../../../docindex/ids.js';
import { activeEmbeddingProvider } from '../../../docindex/embeddings/profiles.js';

let tmp: string;
let stack: TestStack;
const GARDEN = '/local/garden-kit';
const ORBIT = '/local/orbit-db';
const SPARK = '/local/spark-ui';
/** The start of Context7's txt up to its first result (the rules come first). */
const FIRST = '^(### Rules\\n\\n(- [^\\n]+\\n)+\\n)?';

type Snippet = { id: string; libraryId: string; versionId: string | null; versionTag: string | null; filePath: string; tokenCount: number; score: number };
const ctx = (params: Record<string, string> | URLSearchParams) => api(stack, 'GET', `/api/v1/context?${new URLSearchParams(params)}`);
async function text(p: string) {
  const res = await fetch(`${stack.url}${p}`);
  return { status: res.status, body: await res.text() };
}

async function addLibrary(name: string, files: Record<string, string>, tag?: string) {
  const repo = new TestRepo(path.join(tmp, name));
  repo.write(files);
  repo.commit('docs');
  if (tag) repo.tag(tag);
  const lib = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir });
  expect(lib.status, JSON.stringify(lib.body)).toBe(201);
  expect((await waitForJob(stack, lib.body.job.id)).status).toBe('done');
  if (tag) {
    const v = await api(stack, 'POST', `/api/v1/libs/${enc(`/local/${name}`)}/versions`, { tag, autoIndex: true });
    expect(v.status, JSON.stringify(v.body)).toBe(201);
    expect((await waitForJob(stack, v.body.job.id)).status).toBe('done');
  }
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-multi-'));
  const model = await buildTinyModel(tmp);
  stack = await startTestStack({ env: { EMBEDDING_MODEL_PATH: model.path } });
  // The garden mentions storage in passing; the orbit database is about it (the best answer is in the second library).
  await addLibrary('garden-kit', {
    'gristmill.json': JSON.stringify({ rules: ['Plant the garden before watering it.'] }),
    'README.md': '# Garden Kit\n\nGarden Kit grows plants in pots.\n\n## Watering\n\nCall waterPlants(pot) every morning; storage of the water is up to you.\n',
    'docs/seeds.md': '# Seeds\n\nSow seeds with sowSeeds(tray) and keep the tray warm until they sprout.\n',
  });
  await addLibrary(
    'orbit-db',
    {
      'README.md': '# Orbit DB\n\nOrbit DB is a small document database.\n\n## Storage engine\n\nThe storage engine writes durable storage pages with writeAhead logging; configure storage with openStore(path).\n',
      'docs/queries.md': '# Queries\n\nRun findDocuments(filter) to read documents matching a filter.\n',
    },
    'v1.0.0',
  );
  await addLibrary('spark-ui', {
    'README.md': '# Spark UI\n\nSpark UI draws buttons and sliders.\n\n## Buttons\n\nCreate a button with createButton(label) and attach an onClick handler.\n',
  });
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('parseLibraryRefList', () => {
  it('reads lists, drops duplicates, refuses malformed entries and control characters', () => {
    expect(parseLibraryRefList(' /a/b , /c/d/v1.0.0,,/a/b ')).toEqual([
      { libraryId: '/a/b', version: undefined },
      { libraryId: '/c/d', version: 'v1.0.0' },
    ]);
    expect(parseLibraryRefList('*')).toBe('all');
    expect(parseLibraryRefList('*,/a/b')).toBeUndefined();
    expect(parseLibraryRefList('/a/b,nope')).toBeUndefined();
    expect(parseLibraryRefList('/a/b,/c/d\u0000')).toBeUndefined();
    expect(parseLibraryRefList(' , ')).toBeUndefined();
  });
});

describe('GET /api/v1/context across libraries', () => {
  it('embeds the query once, however many libraries it searches', async () => {
    const provider = (await activeEmbeddingProvider(stack.orm.em.fork(), stack.config))!;
    const embed = vi.spyOn(provider, 'embed');
    try {
      for (const searchMode of ['semantic', 'hybrid']) {
        embed.mockClear();
        const query = `orbit storage pages, ${searchMode}`;
        const res = await ctx({ libraryId: `${GARDEN},${ORBIT}`, query, searchMode });
        expect(res.body.searchMode).toBe(searchMode);
        // Only this query's embeddings count: the provider is the process's, which other work may use meanwhile.
        const ofTheQuery = () => embed.mock.calls.filter(([texts]) => texts.includes(query));
        expect(ofTheQuery(), searchMode).toHaveLength(1);
        // Asked again, its vector is the one kept (docindex/search/query-vectors.ts).
        expect((await ctx({ libraryId: `${GARDEN},${ORBIT}`, query, searchMode })).body.snippets).toEqual(res.body.snippets);
        expect(ofTheQuery(), searchMode).toHaveLength(1);
      }
    } finally {
      embed.mockRestore();
    }
  });

  it('ranks the best answer first whichever library holds it, each result naming its library', async () => {
    for (const searchMode of ['keyword', 'hybrid', 'semantic']) {
      const res = await ctx({ libraryId: `${GARDEN},${ORBIT}`, query: 'storage engine durable storage pages', searchMode });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const b = res.body;
      expect(Object.keys(b).sort()).toEqual(['libraries', 'reranked', 'resultCount', 'searchMode', 'skipped', 'snippets', 'versionTags']);
      expect(b.searchMode).toBe(searchMode);
      expect(b.snippets[0], searchMode).toMatchObject({ libraryId: ORBIT, versionId: null, versionTag: null, filePath: 'README.md' });
      const libs = new Set(b.snippets.map((s: Snippet) => s.libraryId));
      expect([...libs].every((l) => l === GARDEN || l === ORBIT)).toBe(true);
      if (searchMode === 'keyword') expect(libs).toEqual(new Set([GARDEN, ORBIT])); // the garden's passing mention comes later
      expect(b.libraries.map((l: { requested: string }) => l.requested)).toEqual([GARDEN, ORBIT]);
      expect(b.libraries[0].rules).toEqual(['Plant the garden before watering it.']);
      expect(b.skipped).toEqual([]);
    }
  });

  it('takes a version, a repeated parameter, and searches a scope named twice once', async () => {
    const params = new URLSearchParams([
      ['libraryId', `${ORBIT}/v1.0.0`],
      ['libraryId', SPARK],
      ['libraryId', `${SPARK},${ORBIT}/v1.0.0`],
      ['query', 'openStore storage'],
      ['searchMode', 'keyword'],
    ]);
    const res = await ctx(params);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.libraries).toHaveLength(2);
    expect(res.body.libraries[0].version).toEqual({ requested: 'v1.0.0', resolved: 'v1.0.0', id: `${ORBIT}/v1.0.0` });
    expect(res.body.snippets[0]).toMatchObject({ libraryId: ORBIT, versionId: `${ORBIT}/v1.0.0`, versionTag: 'v1.0.0' });
    expect(res.body.versionTags).toEqual({ [`${ORBIT}/v1.0.0`]: 'v1.0.0' });
  });

  it('applies the token budget over the merged list', async () => {
    const q = { libraryId: `${GARDEN},${ORBIT},${SPARK}`, query: 'storage water button seeds', searchMode: 'keyword' };
    const all = await ctx(q);
    expect(new Set(all.body.snippets.map((s: Snippet) => s.libraryId)).size).toBe(3);
    const first2 = all.body.snippets[0].tokenCount + all.body.snippets[1].tokenCount;
    const two = await ctx({ ...q, tokens: String(first2) });
    expect(two.body.snippets.map((s: Snippet) => s.id)).toEqual(all.body.snippets.slice(0, 2).map((s: Snippet) => s.id));
    expect((await ctx({ ...q, tokens: '1' })).body.resultCount).toBe(1);
  });

  it('searches every indexed library with *', async () => {
    const res = await ctx({ libraryId: '*', query: 'createButton onClick', searchMode: 'keyword' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.libraries.map((l: { requested: string }) => l.requested).sort()).toEqual([GARDEN, ORBIT, SPARK]);
    expect(res.body.snippets[0].libraryId).toBe(SPARK);
    // Blank is still 400, as the spec says.
    expectError(await ctx({ libraryId: '', query: 'x' }), 400, 'MISSING_PARAMETER');
  });

  it('skips missing and unfinished libraries among several, and answers as alone when nothing is left', async () => {
    await stack.orm.em.fork().execute(`update library set state = 'indexing' where id = ?`, [SPARK]);
    try {
      const res = await ctx({ libraryId: `/nobody/nothing,${GARDEN},${ORBIT}/v9.9.9,${SPARK}`, query: 'water', searchMode: 'keyword' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.libraries.map((l: { requested: string }) => l.requested)).toEqual([GARDEN]);
      expect(res.body.skipped).toEqual([
        { libraryId: '/nobody/nothing', reason: 'not_found', message: expect.any(String) },
        { libraryId: `${ORBIT}/v9.9.9`, reason: 'not_found', message: expect.stringMatching(/v9\.9\.9/) },
        { libraryId: SPARK, reason: 'indexing', message: expect.stringMatching(/being indexed/) },
      ]);
      const star = await ctx({ libraryId: '*', query: 'water', searchMode: 'keyword' });
      expect(star.body.skipped).toEqual([{ libraryId: SPARK, reason: 'indexing', message: expect.any(String) }]);
      expectError(await ctx({ libraryId: `/nobody/nothing,${SPARK}`, query: 'water' }), 404, 'LIBRARY_NOT_FOUND');
      expectError(await ctx({ libraryId: `${SPARK},/nobody/nothing`, query: 'water' }), 503, 'INDEXING_IN_PROGRESS');
    } finally {
      await stack.orm.em.fork().execute(`update library set state = 'indexed' where id = ?`, [SPARK]);
    }
  });

  it('refuses bad lists with stable codes', async () => {
    const many = Array.from({ length: 21 }, (_, i) => `/o/r${i}`).join(',');
    expectError(await ctx({ libraryId: many, query: 'x' }), 400, 'TOO_MANY_LIBRARIES');
    expectError(await ctx({ libraryId: `${GARDEN},not-an-id`, query: 'x' }), 400, 'MISSING_PARAMETER');
    expectError(await ctx({ libraryId: `*,${GARDEN}`, query: 'x' }), 400, 'MISSING_PARAMETER');
    expectError(await ctx({ libraryId: `${GARDEN},${ORBIT}`, query: '  ' }), 400, 'MISSING_PARAMETER');
    expectError(await ctx({ libraryId: `${GARDEN},${ORBIT}\u0000`, query: 'x' }), 400, 'INVALID_CHARACTER');
  });

  it('answers text naming the library of each result, every library searched and those skipped', async () => {
    const res = await text(`/api/v1/context?${new URLSearchParams({ libraryId: `${GARDEN},${ORBIT}/v1.0.0,/nobody/nothing`, query: 'storage engine', type: 'txt', searchMode: 'keyword' })}`);
    expect(res.status).toBe(200);
    expect(res.body.startsWith(`## Rules\n\n### ${GARDEN}\n\n- Plant the garden before watering it.`)).toBe(true);
    expect(res.body).toMatch(new RegExp(`### [^\\n]+\\n\\nLibrary: ${ORBIT} \\(v1\\.0\\.0\\)\\nSource: README\\.md`));
    expect(res.body).toMatch(new RegExp(`Repository: [^\\n]+ \\(${GARDEN}\\)\\nIndexed: `));
    expect(res.body).toContain(`(${ORBIT}), version v1.0.0`);
    expect(res.body).toMatch(/Skipped: \/nobody\/nothing \(not_found: .+\)\nResult count: [1-9]/);
  });
});

describe('Context7 v2 and MCP across libraries', () => {
  it('GET /api/v2/context takes several ids (@version too) and labels each snippet', async () => {
    const params = { libraryId: `${GARDEN},${ORBIT}@v1.0.0`, query: 'storage engine durable', searchMode: 'keyword' };
    const txt = await text(`/api/v2/context?${new URLSearchParams(params)}`);
    expect(txt.status, txt.body).toBe(200);
    expect(txt.body).toMatch(new RegExp(`${FIRST}### [^\\n]+\\n\\nSource: [^\\n]+README\\.md\\nLibrary: ${ORBIT} \\(v1\\.0\\.0\\)`));
    const json = await api(stack, 'GET', `/api/v2/context?${new URLSearchParams({ ...params, type: 'json' })}`);
    expect(json.status).toBe(200);
    expect(json.body.infoSnippets[0]).toMatchObject({ libraryId: ORBIT, versionTag: 'v1.0.0' });
    expect(json.body.rules.libraryOwn).toEqual(['Plant the garden before watering it.']);
    expect(json.body.skipped).toEqual([]);
    const cases: [Record<string, string>, number, string][] = [
      [{ libraryId: `${GARDEN},widget`, query: 'x' }, 400, 'invalid_library_id'],
      [{ libraryId: Array.from({ length: 21 }, (_, i) => `/o/r${i}`).join(','), query: 'x' }, 400, 'too_many_libraries'],
      [{ libraryId: '/nobody/nothing,/nobody/else', query: 'x' }, 404, 'library_not_found'],
      [{ libraryId: `${GARDEN},${SPARK}`, query: 'zebra', searchMode: 'keyword' }, 404, 'no_snippets_found'],
    ];
    for (const [p, status, code] of cases) {
      const res = await api(stack, 'GET', `/api/v2/context?${new URLSearchParams(p)}`);
      expect(res.status, JSON.stringify([p, res.body])).toBe(status);
      expect(res.body).toEqual({ error: code, message: expect.any(String) });
    }
  });

  it('MCP query-docs takes libraryIds, a comma list, and *', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
    const call = async (args: Record<string, unknown>) => {
      const r = await client.callTool({ name: 'query-docs', arguments: args });
      return { isError: r.isError, text: (r.content as { text: string }[])[0]!.text };
    };
    try {
      const ids = await call({ libraryIds: [GARDEN, `${ORBIT}@v1.0.0`], query: 'storage engine durable', searchMode: 'keyword' });
      expect(ids.isError).toBeFalsy();
      expect(ids.text).toMatch(new RegExp(`${FIRST}### [^\\n]+\\n\\nSource: [^\\n]+\\nLibrary: ${ORBIT} \\(v1\\.0\\.0\\)`));
      expect(ids.text).toContain(`${GARDEN}: Indexed: `);
      const comma = await call({ libraryId: `${SPARK},${GARDEN}`, query: 'createButton', searchMode: 'keyword' });
      expect(comma.text).toMatch(new RegExp(`Library: ${SPARK}\\n`));
      const star = await call({ libraryId: '*', query: 'sowSeeds tray', searchMode: 'keyword' });
      expect(star.text).toMatch(new RegExp(`${FIRST}### [^\\n]+\\n\\nSource: [^\\n]+\\nLibrary: ${GARDEN}\\n`));
      const bad = await call({ libraryIds: Array.from({ length: 21 }, (_, i) => `/o/r${i}`), query: 'x' });
      expect(bad.isError).toBe(true);
      expect(bad.text).toMatch(/^TOO_MANY_LIBRARIES: /);
    } finally {
      await client.close();
    }
  });
});

describe('results across libraries are distinct', () => {
  it('answers a text two libraries ship once, from the better-ranked one', async () => {
    // A fork of the garden kit: its README is the garden kit's, word for word.
    await addLibrary('garden-fork', {
      'README.md': '# Garden Kit\n\nGarden Kit grows plants in pots.\n\n## Watering\n\nCall waterPlants(pot) every morning; storage of the water is up to you.\n',
    });
    for (const searchMode of ['keyword', 'hybrid']) {
      const res = await ctx({ libraryId: `${GARDEN},/local/garden-fork`, query: 'waterPlants every morning', searchMode });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const watering = res.body.snippets.filter((s: { content: string }) => s.content.includes('waterPlants(pot)'));
      expect(watering, searchMode).toHaveLength(1);
    }
  });

  it('weighs a word by how rare it is in every library searched, not in each alone', async () => {
    // Every page of the widget kit says "widget", so there the word weighs next to nothing; the ledger says it once,
    // beside "resize", so weighed by the ledger's own statistics its page held both rare words of the question.
    const widgetPages = Object.fromEntries(
      ['buttons', 'sliders', 'themes', 'layout', 'events', 'icons'].map((topic) => [`docs/${topic}.md`, `# Widget ${topic}\n\nEach widget has ${topic}; a widget draws its ${topic} when the widget is shown.\n`]),
    );
    await addLibrary('widget-kit', {
      ...widgetPages,
      'docs/resizing.md': '# Resizing\n\nCall resizeWidget(widget, size) to resize it; it keeps its ratio.\n',
    });
    const ledgerPages = Object.fromEntries(
      ['rows', 'pages', 'indexes', 'backups', 'queries', 'transactions', 'locks', 'snapshots', 'replicas', 'schemas'].map((topic) => [
        `docs/${topic}.md`,
        `# Ledger ${topic}\n\nThe ledger keeps its ${topic} on disk and reads ${topic} back in order.\n`,
      ]),
    );
    await addLibrary('ledger-db', {
      ...ledgerPages,
      'README.md': '# Ledger DB\n\nLedger DB stores rows in pages.\n\n## Admin\n\nThe admin widget can resize its table of rows.\n',
    });
    for (const searchMode of ['keyword', 'hybrid']) {
      const res = await ctx({ libraryId: '/local/ledger-db,/local/widget-kit', query: 'resize a widget', searchMode });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.snippets[0], searchMode).toMatchObject({ libraryId: '/local/widget-kit', filePath: 'docs/resizing.md' });
    }
    // Alone, each library still ranks by its own statistics: the ledger's page is its best answer.
    const alone = await ctx({ libraryId: '/local/ledger-db', query: 'resize a widget', searchMode: 'keyword' });
    expect(alone.body.snippets[0]).toMatchObject({ filePath: 'README.md' });
  });
});
