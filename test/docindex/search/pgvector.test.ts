import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, waitForJob } from '../helpers.js';
import { TestRepo } from '../../support/git.js';
import { createTestDatabase, startTestStack, type TestStack } from '../../support/stack.js';
import { buildTinyModel } from '../../../fakes/tiny-model.js';
import { createLogger } from '../../../core/log.js';
import { migrate } from '../../../db/orm.js';
import { openDatabase } from '../../../runtime/database.js';
import { Library } from '../../../docindex/entities/library.js';
import { activeEmbeddingProvider } from '../../../docindex/embeddings/profiles.js';
import { embedQuery } from '../../../docindex/embeddings/provider.js';
import { EXACT_MAX_ROWS, ensurePgvector, ensureScopeIndex, pgvectorTopK, scopeVectors } from '../../../docindex/search/pgvector.js';
import { rankScope, scopeStamp, vectorCache } from '../../../docindex/search/search.js';
import { contextParams } from '../../../docindex/search/context.js';
import { retrieveAcrossLibraries } from '../../../docindex/search/multi-library.js';
import { loadMatrix, topK } from '../../../docindex/search/vectors.js';

/**
 * SEARCH_VECTORS=pgvector against a real PostgreSQL with pgvector (test/support/pgvector-postgres.ts): indexing writes
 * the `vector` column, semantic search runs in PostgreSQL and answers what the in-process search answers, exactly or
 * through the HNSW index, and the API process loads no matrix. A server without the extension stops the start.
 */
const log = createLogger('warn');
const LIB = '/local/pgv-kit';
const scope = { repositoryId: LIB, versionId: null };
const PROFILE = 'default-local';

describe('a PostgreSQL without pgvector', () => {
  it('stops SEARCH_VECTORS=pgvector at start, saying what to do', async () => {
    const url = await createTestDatabase('nopgv');
    const orm = await openDatabase(url);
    try {
      await migrate(orm, url);
      await expect(ensurePgvector(orm, log)).rejects.toThrow(/SEARCH_VECTORS=pgvector, but this PostgreSQL server has no pgvector extension.*SEARCH_VECTORS=memory/);
    } finally {
      await orm.close();
    }
  });
});

describe('a database role that may not create the extension', () => {
  it('stops the start saying a superuser must create it', async () => {
    const server = inject('pgvector');
    if ('error' in server) throw new Error(server.error);
    const admin = await openDatabase(server.url);
    const name = `pgv_limited_${Date.now()}`;
    try {
      await admin.em.fork().execute(`create role ${name} login`);
      await admin.em.fork().execute(`create database ${name} owner ${name}`);
    } finally {
      await admin.close();
    }
    const url = new URL(server.url);
    url.username = name;
    url.pathname = `/${name}`;
    const orm = await openDatabase(url.toString());
    try {
      await migrate(orm, url.toString());
      await expect(ensurePgvector(orm, log)).rejects.toThrow(/may not create the pgvector extension; have a superuser run "create extension vector"/);
    } finally {
      await orm.close();
    }
  });
});

describe('SEARCH_VECTORS=pgvector', () => {
  let tmp: string;
  let stack: TestStack;
  const sql = <T = Record<string, unknown>>(q: string, params: unknown[] = []) => stack.orm.em.fork().execute<T[]>(q, params);

  beforeAll(async () => {
    const server = inject('pgvector');
    if ('error' in server) throw new Error(server.error);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-pgv-'));
    const model = await buildTinyModel(tmp);
    stack = await startTestStack({ databaseServer: server.url, env: { EMBEDDING_MODEL_PATH: model.path, SEARCH_VECTORS: 'pgvector' } });
    const repo = new TestRepo(path.join(tmp, 'pgv-kit'));
    const files: Record<string, string> = {};
    ['router', 'cache', 'server', 'client', 'token', 'widget', 'render', 'deploy'].forEach((t, i) => {
      files[`docs/${t}.md`] =
        `# The ${t} guide\n\nHow the ${t} works in Widget Kit and how to set it up.\n\n` +
        `## Configuring the ${t}\n\nCall configure${t}(options) before rendering; options are read once.\n\n` +
        `\`\`\`ts\nconst ${t} = configure${t}({ level: ${i} });\n\`\`\`\n\n## Handling ${t} errors\n\nEvery ${t} error goes to the error handler.\n`;
    });
    repo.write(files);
    repo.commit('first');
    const two = new TestRepo(path.join(tmp, 'pgv-two'));
    two.write({ 'README.md': '# Two\n\nA second library: its router and its cache, and the errors they raise.\n\n## Router errors\n\nA router error names the route.\n' });
    two.commit('first');
    for (const dir of [repo.dir, two.dir]) {
      const lib = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: dir });
      expect(lib.status, JSON.stringify(lib.body)).toBe(201);
      expect((await waitForJob(stack, lib.body.job.id)).status).toBe('done');
    }
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** The scope's semantic ranking as `store` gives it, through the search the API runs. */
  async function ranked(store: 'memory' | 'pgvector', query: string) {
    const em = stack.orm.em.fork();
    const lib = await em.findOneOrFail(Library, { id: LIB });
    const config = { ...stack.config, searchVectors: store };
    const r = await rankScope({ config, log }, em, { scope, query, mode: 'semantic', alpha: 1, limit: 20, stamp: scopeStamp(lib.lastIndexedAt) });
    expect(r.mode).toBe('semantic');
    return r.ranked;
  }

  const close = (a: { id: string; score: number }[], b: { id: string; score: number }[]) => {
    expect(a.map((r) => r.id)).toEqual(b.map((r) => r.id));
    a.forEach((r, i) => expect(r.score).toBeCloseTo(b[i]!.score, 5));
  };

  it('writes every indexed vector into the vector column, at unit length', async () => {
    const [row] = await sql<{ n: number; filled: number; off: number }>(
      `select count(*)::int as n, count(embedding_vector)::int as filled,
              count(*) filter (where abs(vector_norm(embedding_vector) - 1) > 1e-4)::int as off
       from snippet_embedding where repository_id = ?`,
      [LIB],
    );
    expect(row!.n).toBeGreaterThan(10);
    expect(row!.filled).toBe(row!.n);
    expect(row!.off).toBe(0);
  });

  it('answers semantic searches in PostgreSQL with what the in-process search answers, and holds no matrix', async () => {
    const before = vectorCache(stack.config).size.entries;
    for (const q of ['router cache', 'handle an error', 'deploy the widget']) close(await ranked('pgvector', q), await ranked('memory', q));
    const res = await api(stack, 'GET', `/api/v1/context?${new URLSearchParams({ libraryId: LIB, query: 'configure the token', searchMode: 'semantic', type: 'json' })}`);
    expect(res.status).toBe(200);
    expect(res.body.searchMode).toBe('semantic');
    expect(res.body.snippets.length).toBeGreaterThan(0);
    // The 'memory' rankings above loaded one matrix in this test process; the API's own searches load none.
    expect(vectorCache(stack.config).size.entries).toBeLessThanOrEqual(before + 1);
  });

  it('searches several libraries in one statement, answering what the in-process search answers', async () => {
    const across = async (store: 'memory' | 'pgvector', searchMode: string) => {
      const deps = { config: { ...stack.config, searchVectors: store }, orm: stack.orm, log };
      const r = await retrieveAcrossLibraries(deps, contextParams({ libraryId: `${LIB},/local/pgv-two`, query: 'router errors', searchMode }));
      return { mode: r.searchMode, snippets: r.snippets.map((x) => [x.libraryId, x.title]) };
    };
    for (const mode of ['semantic', 'hybrid']) {
      const inPostgres = await across('pgvector', mode);
      expect(inPostgres.mode).toBe(mode);
      expect(new Set(inPostgres.snippets.map((x) => x[0]))).toEqual(new Set([LIB, '/local/pgv-two']));
      expect(inPostgres).toEqual(await across('memory', mode));
    }
  });

  it('searches a scope too big for exact search through its own HNSW index, with the exact ranking', async () => {
    const em = stack.orm.em.fork();
    const { rows, dims } = await scopeVectors(em, scope, PROFILE);
    await ensureScopeIndex(em, scope, PROFILE, dims);
    const defs = await sql<{ def: string }>(`select indexdef as def from pg_indexes where tablename = 'snippet_embedding' and indexname like 'snippet_embedding_hnsw_%'`);
    expect(defs.map((d) => d.def)).toEqual([expect.stringMatching(/USING hnsw .*vector_ip_ops.*WHERE .*profile_id.*'default-local'.*repository_id.*'\/local\/pgv-kit'.*version_id IS NULL/)]);
    const provider = (await activeEmbeddingProvider(em, stack.config))!;
    const query = await embedQuery(provider, 'handle an error');
    const exact = await pgvectorTopK(em, [{ scope, rows }], PROFILE, query, 10);
    const viaIndex = await pgvectorTopK(em, [{ scope, rows: EXACT_MAX_ROWS + 1 }], PROFILE, query, 10);
    close(viaIndex, exact);
    // And both are the in-process scan's.
    close(exact, await topK(await loadMatrix(em, scope, PROFILE), query, 10));
    // Several scopes, one of them large: its index and the others' exact statement, merged as one exact statement would.
    const two = { scope: { repositoryId: '/local/pgv-two', versionId: null }, rows: 1 };
    close(await pgvectorTopK(em, [{ scope, rows: EXACT_MAX_ROWS + 1 }, two], PROFILE, query, 12), await pgvectorTopK(em, [{ scope, rows }, two], PROFILE, query, 12));
  });

  it('fills the column of rows written without it (a memory-mode worker, an older install) at the next start', async () => {
    const want = await ranked('pgvector', 'router cache');
    await sql(`update snippet_embedding set embedding_vector = null where repository_id = ?`, [LIB]);
    expect((await scopeVectors(stack.orm.em.fork(), scope, PROFILE)).rows).toBe(0);
    await ensurePgvector(stack.orm, log);
    const [row] = await sql<{ missing: number }>(`select count(*) filter (where embedding_vector is null)::int as missing from snippet_embedding`);
    expect(row!.missing).toBe(0);
    // A new stamp, as after a re-index: the scope's count is read again.
    const em = stack.orm.em.fork();
    const lib = await em.findOneOrFail(Library, { id: LIB });
    const again = await rankScope({ config: stack.config, log }, em, { scope, query: 'router cache', mode: 'semantic', alpha: 1, limit: 20, stamp: `${scopeStamp(lib.lastIndexedAt)}-refilled` });
    close(again.ranked, want);
  });

  it('drops the HNSW index of a library that is gone when the next one is built', async () => {
    const em = stack.orm.em.fork();
    const two = { repositoryId: '/local/pgv-two', versionId: null };
    const dims = (await scopeVectors(em, scope, PROFILE)).dims;
    await ensureScopeIndex(em, two, PROFILE, dims);
    const names = async () => (await sql<{ def: string }>(`select indexdef as def from pg_indexes where indexname like 'snippet_embedding_hnsw_%'`)).map((r) => r.def);
    expect((await names()).some((d) => d.includes('/local/pgv-two'))).toBe(true);
    const res = await api(stack, 'DELETE', `/api/v1/libs/${encodeURIComponent('/local/pgv-two')}`);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    await ensureScopeIndex(em, scope, PROFILE, dims);
    const left = await names();
    expect(left.some((d) => d.includes('/local/pgv-two'))).toBe(false);
    expect(left.some((d) => d.includes('/local/pgv-kit'))).toBe(true);
  });
});
