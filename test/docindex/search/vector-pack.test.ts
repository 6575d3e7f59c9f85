import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, enc, waitForJob } from '../helpers.js';
import { TestRepo } from '../../support/git.js';
import { startTestStack, type TestStack } from '../../support/stack.js';
import { until } from '../../support/until.js';
import { buildTinyModel } from '../../../fakes/tiny-model.js';
import { closeSearch, keywordIndexCacheSize, vectorCache } from '../../../docindex/search/search.js';
import { readVectorPack, writeVectorPack } from '../../../docindex/search/vector-pack.js';
import { loadMatrix, topK } from '../../../docindex/search/vectors.js';

let tmp: string;
let stack: TestStack;
let repo: TestRepo;
const LIB = '/local/pack-kit';
const scope = { repositoryId: LIB, versionId: null };
const PROFILE = 'default-local';

const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);
const ctx = (query: string) => api(stack, 'GET', `/api/v1/context?${new URLSearchParams({ libraryId: LIB, query, searchMode: 'semantic', type: 'json' })}`);
const packRows = () => sql(`select chunk, chunks, fingerprint from vector_pack where repository_id = ? and version_id is null and profile_id = ? order by chunk`, [LIB, PROFILE]);

async function indexAgain(): Promise<void> {
  const res = await api(stack, 'POST', `/api/v1/libs/${enc(LIB)}/index`);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect((await waitForJob(stack, res.body.job.id)).status).toBe('done');
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-pack-'));
  const model = await buildTinyModel(tmp);
  stack = await startTestStack({ env: { EMBEDDING_MODEL_PATH: model.path } });
  repo = new TestRepo(path.join(tmp, 'pack-kit'));
  const files: Record<string, string> = {};
  const topics = ['router', 'cache', 'server', 'client', 'token', 'widget', 'render', 'deploy', 'config', 'state', 'hook', 'query'];
  topics.forEach((t, i) => {
    files[`docs/${t}.md`] =
      `# The ${t} guide\n\nThis guide explains how the ${t} works in Widget Kit and how to set it up for your application.\n\n` +
      `## Configuring the ${t}\n\nCall configure${t}(options) before rendering; the ${t} reads its options once, at start, and keeps them for the page's life.\n\n` +
      `\`\`\`ts\nconst ${t} = configure${t}({ level: ${i}, cache: true });\n\`\`\`\n\n` +
      `## Handling ${t} errors\n\nEvery ${t} error is reported to the error handler with the request that caused it, so you can show the user what went wrong.\n`;
  });
  repo.write(files);
  repo.commit('first');
  // The warm-up's job is checked below: nothing is in the cache before the library is indexed.
  await closeSearch();
  const lib = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir });
  expect(lib.status, JSON.stringify(lib.body)).toBe(201);
  expect((await waitForJob(stack, lib.body.job.id)).status).toBe('done');
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('warming on announcement', () => {
  it('loads the indexed scope into the vector cache and its keyword index when its job is done, before any query', async () => {
    const { entries, bytes } = await until(async () => vectorCache(stack.config).size, (s) => s.entries === 1, { what: 'the scope warmed' });
    expect(bytes).toBeGreaterThan(0);
    expect(keywordIndexCacheSize().entries).toBe(1);
    // The next query finds it: no second matrix is loaded.
    expect((await ctx('router cache')).body.searchMode).toBe('semantic');
    expect(vectorCache(stack.config).size).toEqual({ entries, bytes });
  });
});

describe('the vector pack', () => {
  it('is written by indexing, read by search, and answers as the rows do', async () => {
    expect((await packRows()).length).toBeGreaterThan(0);
    const em = stack.orm.em.fork();
    const packed = await readVectorPack(em, scope, PROFILE);
    const fromPack = await loadMatrix(em, scope, PROFILE);
    const fromRows = await loadMatrix(em, scope, PROFILE, undefined, { packed: false });
    expect(packed?.ids).toEqual(fromRows.ids);
    expect(fromPack.ids).toEqual(fromRows.ids);
    expect([...fromPack.pageOf]).toEqual([...fromRows.pageOf]);
    // The rows name each page's document; a pack learns them when a search needs them (page-name-lookup.ts).
    const documents = (await em.execute(`select id, document_id from snippet`)) as { id: string; document_id: string }[];
    const documentOf = new Map(documents.map((d) => [d.id, d.document_id]));
    expect(fromRows.ids.map((_, i) => fromRows.pageDocuments[fromRows.pageOf[i]!])).toEqual(fromRows.ids.map((id) => documentOf.get(id)));
    expect(fromPack.pageDocuments).toEqual([]);
    const query = new Float32Array(fromRows.dims).map((_, i) => Math.sin(i));
    expect(await topK(fromPack, query, 10)).toEqual(await topK(fromRows, query, 10));

    // Over HTTP: the same answers from the pack and, with the pack gone, from the rows.
    await closeSearch();
    const withPack = [(await ctx('router cache')).body, (await ctx('handle error')).body];
    await sql('delete from vector_pack');
    await closeSearch();
    const withoutPack = [(await ctx('router cache')).body, (await ctx('handle error')).body];
    expect(withPack[0].snippets.length).toBeGreaterThan(0);
    expect(withPack).toEqual(withoutPack);
    expect((await writeVectorPack(em, scope, PROFILE)).written).toBe(true);
    expect((await writeVectorPack(em, scope, PROFILE)).written).toBe(false); // already the current one
  });

  it('is split into chunks of consecutive rows, read back whole', async () => {
    const em = stack.orm.em.fork();
    await sql('delete from vector_pack');
    await writeVectorPack(em, scope, PROFILE, 7);
    const rows = await packRows();
    const whole = await loadMatrix(em, scope, PROFILE, undefined, { packed: false });
    expect(rows.length).toBe(Math.ceil(whole.ids.length / 7));
    const packed = (await readVectorPack(em, scope, PROFILE))!;
    expect(packed.ids).toEqual(whole.ids);
    expect([...packed.pageOf]).toEqual([...whole.pageOf]);
    const last = whole.ids.length - 1;
    for (const i of [0, 7, last]) {
      const [row] = (await sql(`select embedding from snippet_embedding where snippet_id = ? and profile_id = ?`, [whole.ids[i], PROFILE])) as { embedding: Buffer }[];
      expect([...packed.row(i)]).toEqual([...new Float32Array(new Uint8Array(row!.embedding).buffer)]);
    }
    await sql('delete from vector_pack');
    await writeVectorPack(em, scope, PROFILE);
  });

  it('is not used once the rows changed without a new pack, for another profile, or when a chunk is missing', async () => {
    const em = stack.orm.em.fork();
    expect(await readVectorPack(em, scope, PROFILE)).toBeDefined();
    expect(await readVectorPack(em, scope, 'another-profile')).toBeUndefined();

    // A re-index swaps snippets; an older run's pack written after it describes rows that are gone.
    const old = await sql(`select * from vector_pack where repository_id = ?`, [LIB]);
    repo.write({ 'docs/router.md': '# Routing\n\n## Navigating\n\nCall navigate(path) to change pages; it pushes a history entry and renders the new page.\n', 'docs/cache.md': null });
    repo.commit('second');
    await indexAgain();
    const fresh = await loadMatrix(em, scope, PROFILE, undefined, { packed: false });
    expect((await readVectorPack(em, scope, PROFILE))?.ids).toEqual(fresh.ids); // the new run packed the new rows
    await sql('delete from vector_pack');
    for (const r of old) {
      await sql(
        `insert into vector_pack (id, repository_id, version_id, profile_id, chunk, chunks, dimensions, fingerprint, ids, pages, vectors, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [r.id, r.repository_id, r.version_id, r.profile_id, r.chunk, r.chunks, r.dimensions, r.fingerprint, r.ids, r.pages, r.vectors, r.created_at],
      );
    }
    expect(await readVectorPack(em, scope, PROFILE)).toBeUndefined();
    expect((await loadMatrix(em, scope, PROFILE)).ids).toEqual(fresh.ids);

    // Rows deleted after the pack was written (a remade profile, a swap before its embed stage).
    await writeVectorPack(em, scope, PROFILE);
    expect(await readVectorPack(em, scope, PROFILE)).toBeDefined();
    const [gone] = fresh.ids;
    await sql(`delete from snippet_embedding where snippet_id = ?`, [gone]);
    expect(await readVectorPack(em, scope, PROFILE)).toBeUndefined();
    expect((await loadMatrix(em, scope, PROFILE)).ids).toEqual(fresh.ids.slice(1));

    // A pack missing a chunk is not read.
    await sql('delete from vector_pack');
    await writeVectorPack(em, scope, PROFILE, 5);
    expect(await readVectorPack(em, scope, PROFILE)).toBeDefined();
    await sql(`delete from vector_pack where chunk = 1`);
    expect(await readVectorPack(em, scope, PROFILE)).toBeUndefined();
  });
});
