import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig } from '../runtime/config.js';
import { createLogger, type Logger } from '../core/log.js';
import { migrate, type Orm } from '../db/orm.js';
import { openDatabase } from '../runtime/database.js';
import { closeProviders } from '../docindex/embeddings/profiles.js';
import { contextParams, retrieveContext, type RetrievalDeps } from '../docindex/search/context.js';
import { refreshTermStatistics } from '../docindex/search/keyword.js';
import { retrieveAcrossLibraries } from '../docindex/search/multi-library.js';
import { EXACT_MAX_ROWS, ensurePgvector, ensureScopeIndex, pgvectorTopK } from '../docindex/search/pgvector.js';
import { closeSearch, keywordIndexCacheSize, vectorCache } from '../docindex/search/search.js';
import { buildTinyModel } from '../fakes/tiny-model.js';
import { realModel } from './quality-model.js';
import { startReplica } from './replica.js';
import { startFakeEmbeddings } from '../fakes/fake-embeddings.js';
import { freePort } from '../fakes/ports.js';
import { provisionPgvector, startPgvectorPostgres } from '../test/support/pgvector-postgres.js';

/**
 * Semantic search at scale with SEARCH_VECTORS=pgvector (docindex/search/pgvector.ts): BENCH_SCALE_SNIPPETS
 * (default 1,000,000) generated snippets over BENCH_SCALE_LIBRARIES (200) libraries whose sizes fall off as 1/rank
 * (a few large ones, searched through the HNSW index, and many small ones, searched exactly), on Debian's PostgreSQL
 * with pgvector (provisioned as the tests do). Vectors are generated in PostgreSQL around 2,000 centres, as real
 * embeddings cluster by topic (uniformly random vectors are the worst case of any nearest-neighbour index and look
 * like no documentation). Prints the index's size, this process's memory (it is the API replica: it holds no
 * vectors, only keyword indexes), semantic and hybrid p50/p95 within one library and across all (`*`, the 20 best
 * named) for 1 and 16 clients, and recall@10 of the HNSW path against the exact scan.
 */
const DIMS = 384;
const CENTRES = 2000;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const since = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
const libId = (i: number) => `/bench/lib${String(i).padStart(3, '0')}`;

/** Library sizes falling off as 1/rank, summing to `total`. */
function sizes(total: number, libraries: number): number[] {
  const weights = Array.from({ length: libraries }, (_, i) => 1 / (i + 1));
  const sum = weights.reduce((a, b) => a + b, 0);
  const out = weights.map((w) => Math.max(1, Math.floor((total * w) / sum)));
  out[0]! += total - out.reduce((a, b) => a + b, 0);
  return out;
}

async function fill(orm: Orm, counts: number[]): Promise<void> {
  const em = orm.em.fork();
  const words = ['install', 'configure', 'router', 'cache', 'request', 'server', 'client', 'error', 'deploy', 'token', ...Array.from({ length: 2000 }, (_, i) => `w${i.toString(36)}x`)];
  await em.execute(`create temporary table centre as select k, l2_normalize(array(select random() - 0.5 from generate_series(1, ${DIMS}) g where g > 0 * k)::vector) as v from generate_series(0, ${CENTRES - 1}) k`);
  let first = 1;
  for (let lib = 0; lib < counts.length; lib++) {
    const n = counts[lib]!;
    const id = libId(lib);
    await em.execute(
      `insert into library (id, title, description, source, source_url, state, total_snippets, trust_score, last_indexed_at, created_at, updated_at)
       values (?, ?, ?, 'local', ?, 'indexed', ?, 5, now(), now(), now())`,
      [id, `Bench library ${lib}`, `generated library ${lib} for the scale benchmark`, id, n],
    );
    const docs = Math.max(1, Math.ceil(n / 20));
    await em.execute(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) select ? || '-d' || g, ?, 'docs/f' || g || '.md', 'x', now() from generate_series(0, ?) g`, [id, id, docs - 1]);
    // ~30 words of content, a 3-word title, words skewed towards the start of the vocabulary.
    await em.execute(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       select 's' || lpad(i::text, 8, '0'), ? || '-d' || (i % ?), ?, null, 'info',
         (select string_agg(w[1 + floor(${words.length} * random() ^ 2)::int + 0 * g], ' ') from generate_series(1, 3 + 0 * i) g),
         (select string_agg(w[1 + floor(${words.length} * random() ^ 2)::int + 0 * g], ' ') from generate_series(1, 30 + 0 * i) g),
         null, 'Guide > Section ' || (i % 40), 45, i, now()
       from generate_series(?::int, ?::int) i, (select ?::text[] as w) v`,
      [id, docs, id, first, first + n - 1, `{${words.join(',')}}`],
    );
    // Each vector near a centre: the library's topics are a few hundred of them.
    await em.execute(
      `insert into snippet_embedding (snippet_id, profile_id, repository_id, model, dimensions, embedding, embedding_vector, version_id, created_at)
       select 's' || lpad(x.i::text, 8, '0'), 'bench', ?, 'tiny-bert', ${DIMS}, '\\x'::bytea,
         l2_normalize(c.v + array(select (random() - 0.5) * 0.08 from generate_series(1, ${DIMS}) g where g > 0 * x.i)::vector), null, now()
       from (select i, (? * 37 + floor(random() * 300)::int) % ${CENTRES} as k from generate_series(?::int, ?::int) i offset 0) x
       join centre c on c.k = x.k`,
      [id, lib, first, first + n - 1],
    );
    await refreshTermStatistics(em, { repositoryId: id, versionId: null });
    first += n;
    if (lib % 20 === 19) process.stdout.write(`  ${lib + 1} libraries, ${(first - 1).toLocaleString('en')} snippets\n`);
  }
  await em.execute(`analyze`);
}

async function measure(clients: number, perClient: number, ask: (q: string) => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  const queries = ['router cache', 'configure the server', 'handle error response', 'deploy token', 'w1x w2x', 'install client', 'request cache', 'w3x server'];
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < perClient; i++) {
        const t0 = performance.now();
        await ask(queries[(c + i) % queries.length]!);
        times.push(performance.now() - t0);
      }
    }),
  );
  return { p50: pct(times, 50), p95: pct(times, 95) };
}

/**
 * recall@10 of the HNSW path against the exact scan, for queries near random snippets of the library, at each
 * `hnsw.ef_search` of EF_SWEEP, with the median time of each path.
 */
const EF_SWEEP = [200, 400, 1000];
async function recall(orm: Orm, repositoryId: string, queries: number): Promise<{ exactMs: number; byEf: { ef: number; recall: number; ms: number }[] }> {
  const em = orm.em.fork();
  const rows = await em.execute<{ v: string }[]>(
    `select (e.embedding_vector + array(select (random() - 0.5) * 0.08 from generate_series(1, ${DIMS}) g where g > 0 * length(e.snippet_id))::vector)::text as v
     from snippet_embedding e where e.repository_id = ? order by random() limit ?`,
    [repositoryId, queries],
  );
  const scope = { repositoryId, versionId: null };
  const exactMs: number[] = [];
  const exact: Set<string>[] = [];
  for (const r of rows) {
    const t0 = performance.now();
    exact.push(new Set((await pgvectorTopK(em, [{ scope, rows: 0 }], 'bench', Float32Array.from(JSON.parse(r.v) as number[]), 10)).map((x) => x.id)));
    exactMs.push(performance.now() - t0);
  }
  const byEf = [];
  for (const ef of EF_SWEEP) {
    let hits = 0;
    const ms: number[] = [];
    for (const [i, r] of rows.entries()) {
      const t0 = performance.now();
      const approx = await pgvectorTopK(em, [{ scope, rows: EXACT_MAX_ROWS + 1 }], 'bench', Float32Array.from(JSON.parse(r.v) as number[]), 10, { efSearch: ef });
      ms.push(performance.now() - t0);
      hits += approx.filter((x) => exact[i]!.has(x.id)).length;
    }
    byEf.push({ ef, recall: hits / (rows.length * 10), ms: pct(ms, 50) });
  }
  return { exactMs: pct(exactMs, 50), byEf };
}

/** This process's live memory: collected first, so what is left is what it holds. */
function liveMemory(): NodeJS.MemoryUsage {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage();
}

/** One replica the `replica` phase measures: its query model, and settings or allocator variables to compare. */
interface ReplicaVariant {
  embeddings: 'local' | 'remote';
  env?: Record<string, string>;
}

/** `BENCH_SCALE_REPLICAS` (a JSON array of ReplicaVariant) compares replicas over the same generated data. */
function replicaVariants(): ReplicaVariant[] {
  const text = process.env.BENCH_SCALE_REPLICAS;
  if (!text) return [{ embeddings: 'local' }, { embeddings: 'remote' }];
  const parsed = JSON.parse(text) as ReplicaVariant[];
  if (!Array.isArray(parsed) || !parsed.every((v) => v.embeddings === 'local' || v.embeddings === 'remote')) {
    throw new Error('BENCH_SCALE_REPLICAS: a JSON array of {"embeddings": "local" | "remote", "env"?: {...}}');
  }
  return parsed;
}

/**
 * A replica as the image runs it (bench/replica.ts): hybrid queries on every library twice (the first reads its
 * keyword index in the background, the second uses it) and across all, then its resident memory. Its query model is
 * `local`: all-MiniLM-L6-v2 in 8 bits in its own thread (what the default profile downloads; 384 dimensions like the
 * generated vectors), or `remote`: an OpenAI-compatible embeddings server (fakes/fake-embeddings.ts), as replicas
 * sharing one model server would have it.
 */
async function replicaMemory(orm: Orm, databaseUrl: string, dataDir: string, libraries: number, variant: ReplicaVariant, log: Logger): Promise<void> {
  const { embeddings } = variant;
  const server = embeddings === 'remote' ? await startFakeEmbeddings({ dimensions: DIMS }) : undefined;
  const profile =
    embeddings === 'remote'
      ? { provider: 'remote-compatible', config: { baseUrl: `${server!.url}/v1` } }
      : { provider: 'local-transformers', config: { modelPath: await realModel('all-MiniLM-L6-v2-q') } };
  await orm.em.fork().execute(`update embedding_profile set provider = ?, config = ?::jsonb where id = 'bench'`, [profile.provider, JSON.stringify(profile.config)]);
  const cacheMb = process.env.SEARCH_KEYWORD_CACHE_MB;
  const env = { SEARCH_VECTORS: 'pgvector', OUTBOUND_ALLOW: '127.0.0.1', ...(cacheMb && { SEARCH_KEYWORD_CACHE_MB: cacheMb }), ...variant.env };
  const replica = await startReplica({ databaseUrl, dataDir, log, env });
  try {
    const modes = new Map<string, number>();
    const ask = async (libraryId: string, query: string) => {
      const params = new URLSearchParams({ libraryId, query, searchMode: 'hybrid', type: 'json' });
      const res = await fetch(`${replica.url}/api/v1/context?${params}`);
      if (!res.ok) throw new Error(`the replica answered ${res.status}: ${await res.text()}`);
      const mode = ((await res.json()) as { searchMode?: string }).searchMode ?? '?';
      modes.set(mode, (modes.get(mode) ?? 0) + 1);
    };
    // RSS after each step, and the peak so far: where the peak is reached.
    const steps: string[] = [];
    const step = async (name: string) => {
      const m = await replica.memory();
      steps.push(`${name} ${mb(m.rss)} (peak ${mb(m.peak)})`);
    };
    await step('started');
    const t0 = performance.now();
    for (const pass of [0, 1]) {
      for (let lib = 0; lib < libraries; lib++) {
        await ask(libId(lib), pass ? 'configure the server cache' : 'router error');
        if (lib === 9) await step(`pass ${pass + 1}, 10 largest libraries`);
      }
      await step(`pass ${pass + 1}`);
      if (!pass) await new Promise((r) => setTimeout(r, 20_000)); // keyword indexes load in the background
      if (!pass) await step('20 s later');
    }
    for (let i = 0; i < 30; i++) await ask('*', i % 2 ? 'deploy token' : 'install client');
    await step('across all');
    const m = await replica.memory();
    const answered = [...modes].map(([mode, n]) => `${n} ${mode}`).join(', ');
    const model = embeddings === 'local' ? 'all-MiniLM-L6-v2 8-bit in its thread' : 'an embeddings server';
    console.log(
      `API replica (node dist/bin/api.js, SEARCH_VECTORS=pgvector, query model: ${model}, SEARCH_KEYWORD_CACHE_MB ${cacheMb ?? 'default'}` +
        `${variant.env ? `, ${JSON.stringify(variant.env)}` : ''}), ` +
        `after ${libraries * 2 + 30} hybrid queries (${answered}) over every library in ${since(t0)}: RSS ${mb(m.rss)}, peak ${mb(m.peak)}`,
    );
    console.log(`  RSS by step: ${steps.join(', ')}`);
  } finally {
    await replica.stop();
    await server?.close();
  }
}

export async function scale(): Promise<void> {
  const total = Number(process.env.BENCH_SCALE_SNIPPETS ?? 1_000_000);
  const libraries = Number(process.env.BENCH_SCALE_LIBRARIES ?? 200);
  const log = createLogger('warn');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-scale-'));
  await fs.chmod(dir, 0o755);
  const bindir = await provisionPgvector(log);
  // Memory for the HNSW build (its graph in memory) and to cache the vectors; the rest of PostgreSQL's defaults.
  const pg = await startPgvectorPostgres(bindir, dir, { port: await freePort(), settings: { shared_buffers: '2GB', maintenance_work_mem: '3GB', max_parallel_maintenance_workers: '1' } });
  const orm = await openDatabase(pg.url);
  try {
    await migrate(orm, pg.url);
    await ensurePgvector(orm, log);
    const model = await buildTinyModel(path.join(dir, 'model'), { hidden: DIMS });
    const config = loadConfig({
      DATA_DIR: dir,
      DATABASE_URL: pg.url,
      LOG_LEVEL: 'warn',
      SEARCH_VECTORS: 'pgvector',
      ...(process.env.SEARCH_KEYWORD_CACHE_MB && { SEARCH_KEYWORD_CACHE_MB: process.env.SEARCH_KEYWORD_CACHE_MB }),
    });
    await orm.em.fork().execute(
      `insert into embedding_profile (id, name, provider, model, dimensions, is_default, enabled, config, created_at, updated_at) values ('bench', 'bench', 'local-transformers', 'tiny-bert', ${DIMS}, true, true, ?::jsonb, now(), now())`,
      [JSON.stringify({ modelPath: model.path })],
    );
    const deps: RetrievalDeps = { config, orm, log };
    const counts = sizes(total, libraries);
    console.log(`machine: ${os.cpus().length} cores, node ${process.version}; ${total.toLocaleString('en')} snippets over ${libraries} libraries (largest ${counts[0]}, smallest ${counts.at(-1)}), ${DIMS} dimensions`);
    let t0 = performance.now();
    await fill(orm, counts);
    console.log(`generated in ${since(t0)}`);
    t0 = performance.now();
    const indexed = counts.map((n, i) => ({ n, i })).filter((x) => x.n > EXACT_MAX_ROWS);
    for (const { i } of indexed) await ensureScopeIndex(orm.em.fork(), { repositoryId: libId(i), versionId: null }, 'bench', DIMS);
    console.log(`HNSW indexes of the ${indexed.length} libraries over ${EXACT_MAX_ROWS.toLocaleString('en')} vectors built in ${since(t0)} (the embed stage builds a library's when it first outgrows exact search)`);
    const [size] = await orm.em.fork().execute<{ table: string; hnsw: string; snippets: string }[]>(
      `select pg_total_relation_size('snippet_embedding') as table,
              (select sum(pg_relation_size(indexrelid)) from pg_index where indrelid = 'snippet_embedding'::regclass and indexrelid::regclass::text like 'snippet_embedding_hnsw_%') as hnsw,
              pg_total_relation_size('snippet') as snippets`,
    );
    console.log(`sizes: snippet_embedding ${mb(Number(size!.table))} (HNSW index ${mb(Number(size!.hnsw))}), snippet ${mb(Number(size!.snippets))}`);

    const large = libId(0);
    const phases = new Set((process.env.BENCH_SCALE_PHASES ?? 'latency,replica,recall').split(','));
    const small = libId(Math.floor(libraries / 2));
    const one = (libraryId: string, mode: string) => (query: string) => retrieveContext(deps, contextParams({ libraryId, query, searchMode: mode }));
    const all = (mode: string) => (query: string) => retrieveAcrossLibraries(deps, contextParams({ libraryId: '*', query, searchMode: mode }));
    // A first pass, as a replica that has served a while: models loaded, keyword indexes read.
    if (phases.has('latency')) for (const ask of [one(large, 'hybrid'), one(small, 'hybrid'), all('hybrid')]) await measure(1, 8, ask);
    if (phases.has('latency')) await new Promise((r) => setTimeout(r, 15_000)); // keyword indexes load in the background
    for (const [label, ask] of !phases.has('latency') ? [] : [
      [`one library, ${counts[0]} snippets (HNSW), semantic`, one(large, 'semantic')],
      [`one library, ${counts[0]} snippets (HNSW), hybrid`, one(large, 'hybrid')],
      [`one library, ${counts[Math.floor(libraries / 2)]} snippets (exact), semantic`, one(small, 'semantic')],
      [`one library, ${counts[Math.floor(libraries / 2)]} snippets (exact), hybrid`, one(small, 'hybrid')],
      ['all libraries (*: 20 searched), semantic', all('semantic')],
      ['all libraries (*: 20 searched), hybrid', all('hybrid')],
    ] as const) {
      for (const clients of [1, 16]) {
        const r = await measure(clients, clients === 1 ? 30 : 6, ask);
        console.log(`  ${label.padEnd(52)} ${String(clients).padStart(2)} client(s)  p50 ${r.p50.toFixed(1).padStart(7)} ms  p95 ${r.p95.toFixed(1).padStart(7)} ms`);
      }
    }
    const m = liveMemory();
    console.log(
      `memory of this process (the API replica), after a collection: RSS ${mb(m.rss)} (JavaScript heap ${mb(m.heapUsed)}, array buffers ${mb(m.arrayBuffers)}); ` +
        `keyword indexes ${mb(keywordIndexCacheSize().bytes)} (${keywordIndexCacheSize().entries} libraries), vector matrices ${mb(vectorCache(config).size.bytes)}; the query model's thread is in RSS`,
    );
    // What a replica holds besides its keyword indexes, which SEARCH_KEYWORD_CACHE_MB bounds.
    await closeSearch();
    console.log(`  without its keyword indexes: RSS ${mb(liveMemory().rss)}`);
    if (phases.has('replica')) {
      const variants = replicaVariants();
      for (const [i, variant] of variants.entries()) await replicaMemory(orm, pg.url, path.join(dir, `replica-${i}`), libraries, variant, log);
    }
    for (const i of [0, 2, 5].filter((k) => phases.has('recall') && counts[k]! > EXACT_MAX_ROWS)) {
      const r = await recall(orm, libId(i), 50);
      const sweep = r.byEf.map((x) => `ef_search ${x.ef}: ${x.recall.toFixed(3)} in ${x.ms.toFixed(1)} ms`).join(', ');
      console.log(`recall@10 of HNSW against the exact scan (${r.exactMs.toFixed(1)} ms), ${libId(i)} (${counts[i]} snippets), 50 queries: ${sweep}`);
    }
  } finally {
    await closeProviders();
    await closeSearch();
    await orm.close();
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
