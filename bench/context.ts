import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../runtime/config.js';
import { createLogger } from '../core/log.js';
import { migrate, type Orm } from '../db/orm.js';
import { openDatabase } from '../runtime/database.js';
import { activeEmbeddingProvider, closeProviders } from '../docindex/embeddings/profiles.js';
import { startEmbeddedPostgres } from '../runtime/postgres.js';
import { contextParams, retrieveContext, type RetrievalDeps } from '../docindex/search/context.js';
import { refreshTermStatistics } from '../docindex/search/keyword.js';
import { Library } from '../docindex/entities/library.js';
import { closeSearch, keywordIndexCacheSize, loadScopeKeywordIndex, scopeStampOf, vectorCache } from '../docindex/search/search.js';
import { writeVectorPack } from '../docindex/search/vector-pack.js';
import { warmScope } from '../docindex/search/warm.js';
import { Timings } from '../docindex/search/timings.js';
import { startFakeRerank } from '../fakes/fake-rerank.js';
import { buildTinyModel } from '../fakes/tiny-model.js';
import { cpuPerQuery, cpuSample, startProfile } from './cpu.js';
import { isRealModel, realModel } from './quality-model.js';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const DIMS = 384;
const LIB = '/bench/lib';

/** A vocabulary of 2,000 pseudo-words plus the tiny model's words; snippets draw from it with a skew (common words). */
function vocabulary(): string[] {
  const tiny = 'install configure router route render component cache request response server client error handle test deploy token page file data query hook state effect'.split(' ');
  return [...tiny, ...Array.from({ length: 2000 }, (_, i) => `w${i.toString(36)}x`)];
}

async function fill(orm: Orm, n: number): Promise<void> {
  const em = orm.em.fork();
  const words = vocabulary();
  await em.execute(`delete from library where id = ?`, [LIB]);
  await em.execute(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, last_indexed_at, created_at, updated_at) values (?, 'Bench', 'local', '/bench', 'indexed', ?, 5, now(), now(), now())`, [LIB, n]);
  await em.execute(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) select 'd' || g, ?, 'docs/f' || g || '.md', 'x', now() from generate_series(0, 999) g`, [LIB]);
  // ~60 words of content, a 3-word title; words skewed towards the start of the vocabulary (a few are common).
  await em.execute(
    `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
     select 's' || lpad(i::text, 7, '0'), 'd' || (i % 1000), ?, null, case when i % 3 = 0 then 'code' else 'info' end,
       (select string_agg(w[1 + floor(${words.length} * random() ^ 2)::int + 0 * g], ' ') from generate_series(1, 3 + 0 * i) g),
       (select string_agg(w[1 + floor(${words.length} * random() ^ 2)::int + 0 * g], ' ') from generate_series(1, 60 + 0 * i) g),
       null, 'Guide > Section ' || (i % 40), 90, i, now()
     from generate_series(1, ?) i, (select ?::text[] as w) v`,
    [LIB, n, `{${words.join(',')}}`],
  );
  // Random unit vectors, as the indexing pipeline stores them (float32 bytes).
  const batch = 500;
  for (let start = 1; start <= n; start += batch) {
    const rows: unknown[] = [];
    const values: string[] = [];
    for (let i = start; i < Math.min(n + 1, start + batch); i++) {
      const v = new Float32Array(DIMS);
      let norm = 0;
      for (let j = 0; j < DIMS; j++) norm += (v[j] = Math.random() - 0.5) ** 2;
      for (let j = 0; j < DIMS; j++) v[j]! /= Math.sqrt(norm);
      values.push(`(?, 'bench', ?, 'tiny-bert', ${DIMS}, ?, now())`);
      rows.push(`s${String(i).padStart(7, '0')}`, LIB, Buffer.from(v.buffer));
    }
    await em.execute(`insert into snippet_embedding (snippet_id, profile_id, repository_id, model, dimensions, embedding, created_at) values ${values.join(', ')}`, rows);
  }
  await em.execute(`update library set last_indexed_at = now() where id = ?`, [LIB]);
  await refreshTermStatistics(em, { repositoryId: LIB, versionId: null }); // as an indexing run does with its snippets
  await em.execute(`analyze snippet`);
  await em.execute(`analyze snippet_embedding`);
}

interface Measured {
  p50: number;
  p95: number;
  count: number;
  times: number[];
  /** Each phase's milliseconds per query (docindex/search/timings.ts), to see where the time goes. */
  phases: Map<string, number[]>;
}

/** Two-to-three-word questions, an identifier, and single words found in 40% of the snippets (the costly case). */
const SEARCH_SETTINGS = ['SEARCH_RANK_CANDIDATES', 'SEARCH_KEYWORD_CACHE_MB', 'SEARCH_SNIPPET_CACHE_MB', 'SEARCH_QUERY_VECTORS'];
const QUESTIONS = ['router cache', 'configure the server', 'useEffect cleanup', 'handle error response', 'deploy token', 'w1x w2x', 'wax query', 'render component state', 'configure', 'router'];

/**
 * `count` questions of two to three words no question asked before (the vocabulary's words, drawn with the snippets'
 * skew, so some are common): what a query costs when neither its terms' matches nor its results' rows are kept yet.
 */
function unseenQuestions(count: number, asked: Set<string>): string[] {
  const words = vocabulary();
  const out: string[] = [];
  while (out.length < count) {
    const q = Array.from({ length: 2 + Math.floor(Math.random() * 2) }, () => words[Math.floor(words.length * Math.random() ** 2)]!).join(' ');
    if (!asked.has(q)) {
      asked.add(q);
      out.push(q);
    }
  }
  return out;
}

async function measure(deps: RetrievalDeps, mode: string, clients: number, perClient: number, queries = QUESTIONS): Promise<Measured> {
  const times: number[] = [];
  const phases = new Map<string, number[]>();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < perClient; i++) {
        // The ten questions in turns; unseen ones each once.
        const query = queries === QUESTIONS ? queries[(c + i) % queries.length]! : queries[c * perClient + i]!;
        const t0 = performance.now();
        const timings = new Timings();
        const r = await retrieveContext(deps, contextParams({ libraryId: LIB, query, searchMode: mode }), { timings });
        times.push(performance.now() - t0);
        for (const [name, ms] of timings.entries()) phases.set(name, [...(phases.get(name) ?? []), ms]);
        if (r.searchMode !== mode) throw new Error(`asked ${mode}, ran ${r.searchMode}`);
        // A query with fewer than two results has nothing to reorder.
        if (r.reranked !== (Boolean(deps.config.rerank.url) && r.resultCount > 1)) throw new Error(`${query}: reranked ${r.reranked}`);
      }
    }),
  );
  return { p50: pct(times, 50), p95: pct(times, 95), count: times.length, times, phases };
}

/**
 * The reranking stage's own cost (docindex/rerank/): the same queries with and without it, against the fake rerank
 * server on 127.0.0.1 (scores by word overlap, answering at once), so what is added is reading the candidates' texts,
 * the request and the reordering, not a model's inference time (BENCH_RERANK_DELAY_MS adds a fixed one).
 */
async function rerankRound(deps: RetrievalDeps): Promise<void> {
  const fake = await startFakeRerank();
  fake.delayMs = Number(process.env.BENCH_RERANK_DELAY_MS ?? 0);
  const reranking: RetrievalDeps = { ...deps, config: { ...deps.config, rerank: { ...deps.config.rerank, url: `${fake.url}/rerank` } } };
  try {
    console.log(`  reranking ${deps.config.rerank.candidates} candidates (fake server, ${fake.delayMs} ms per answer):`);
    for (const mode of ['keyword', 'hybrid']) {
      for (const clients of [1, 16]) {
        // Alternating short rounds with and without, so load from elsewhere on the machine falls on both alike.
        const off: number[] = [];
        const on: number[] = [];
        for (let round = 0; round < 8; round++) {
          off.push(...(await measure(deps, mode, clients, clients === 1 ? 10 : 2)).times);
          on.push(...(await measure(reranking, mode, clients, clients === 1 ? 10 : 2)).times);
        }
        const row = (t: number[]) => `p50 ${pct(t, 50).toFixed(1).padStart(6)} ms  p95 ${pct(t, 95).toFixed(1).padStart(6)} ms`;
        const added = `added p50 ${(pct(on, 50) - pct(off, 50)).toFixed(1)} ms, p95 ${(pct(on, 95) - pct(off, 95)).toFixed(1)} ms`;
        console.log(`  ${mode.padEnd(8)} ${String(clients).padStart(2)} client(s)  without ${row(off)} | with ${row(on)} | ${added} (${on.length} queries each)`);
      }
    }
  } finally {
    await fake.close();
  }
}

/** The key the library's searches cache its indexes under (docindex/search/search.ts). */
const libraryStamp = async (deps: RetrievalDeps) => scopeStampOf(await deps.orm.em.fork().findOneOrFail(Library, { id: LIB }), null);
const since = (t0: number) => `${(performance.now() - t0).toFixed(0)} ms`;
const firstSemantic = (deps: RetrievalDeps) => retrieveContext(deps, contextParams({ libraryId: LIB, query: 'router', searchMode: 'semantic' }));

/**
 * What the first semantic query costs: the model loaded as at API start, then the query that reads the vectors row
 * by row (before packs, or a scope indexed before them), the pack the embed stage writes, a query that reads the pack
 * itself, and the warm-up an API process runs when the indexing job is done (docindex/search/warm.ts) followed by
 * the first query, which then finds everything loaded. Leaves the matrix and the model loaded.
 */
async function firstQueries(deps: RetrievalDeps): Promise<void> {
  const scope = { repositoryId: LIB, versionId: null };
  let t0 = performance.now();
  await (await activeEmbeddingProvider(deps.orm.em.fork(), deps.config))?.prepare?.();
  console.log(`  query model loaded (as at API start): ${since(t0)}`);
  t0 = performance.now();
  await firstSemantic(deps);
  console.log(`  first semantic query, vectors read row by row (no pack): ${since(t0)}`);
  await closeSearch();
  t0 = performance.now();
  await writeVectorPack(deps.orm.em.fork(), scope, 'bench');
  console.log(`  vector pack written (end of the embed stage): ${since(t0)}`);
  t0 = performance.now();
  await firstSemantic(deps);
  console.log(`  first semantic query, vectors read from the pack (no warm-up): ${since(t0)}`);
  await closeSearch();
  t0 = performance.now();
  await loadScopeKeywordIndex(deps, deps.orm.em.fork(), scope, await libraryStamp(deps));
  console.log(`  keyword index read (the warm-up's first part): ${since(t0)}`);
  t0 = performance.now();
  await warmScope(deps, scope);
  console.log(`  warm-up on the job's announcement (the rest: pack into the cache): ${since(t0)}`);
  t0 = performance.now();
  await firstSemantic(deps);
  console.log(`  first semantic query after the warm-up: ${since(t0)}`);
  const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
  console.log(
    `  memory: vectors ${mb(vectorCache(deps.config).size.bytes)}, keyword index ${mb(keywordIndexCacheSize().bytes)}; ` +
      `process RSS ${mb(process.memoryUsage().rss)} (API and PostgreSQL client; PostgreSQL runs apart)`,
  );
}

/**
 * Context retrieval latency (the retrieval code the API route and MCP call, in-process: no HTTP) for each mode with
 * 10k and 100k generated snippets in one library, 1 and 16 concurrent clients. Query embeddings come from the
 * tiny local model built with 384 dimensions (in its worker thread), so the vector scan is the real model's size;
 * BENCH_MODEL names a real one of bench/quality-model.ts instead (all 384 dimensions), whose inference costs what it
 * costs in production.
 * BENCH_SNIPPETS=10000 (comma-separated) runs only those sizes; BENCH_RERANK=0 leaves out the reranking round;
 * BENCH_CPU_PROFILE=/tmp/p writes a V8 profile of the main thread per mode of the 16-client rounds (/tmp/p-hybrid.cpuprofile).
 */
export async function context(): Promise<void> {
  const log = createLogger('warn');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-'));
  await fs.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: dir, port: 54000 + Math.floor(Math.random() * 1000), log });
  const orm = await openDatabase(pg.url);
  try {
    await migrate(orm, pg.url);
    const benchModel = process.env.BENCH_MODEL;
    let model = { name: 'tiny-bert', path: '' };
    if (!benchModel) model.path = (await buildTinyModel(path.join(dir, 'model'), { hidden: DIMS })).path;
    else if (isRealModel(benchModel)) model = { name: benchModel, path: await realModel(benchModel) };
    else throw new Error(`BENCH_MODEL: no model ${benchModel} in bench/quality-model.ts`);
    const config = loadConfig({
      DATA_DIR: dir,
      DATABASE_URL: pg.url,
      LOG_LEVEL: 'warn',
      // The search settings a run may compare, as the environment gives them.
      ...Object.fromEntries(SEARCH_SETTINGS.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []))),
    });
    await orm.em.fork().execute(
      `insert into embedding_profile (id, name, provider, model, dimensions, is_default, enabled, config, created_at, updated_at) values ('bench', 'bench', 'local-transformers', ?, ${DIMS}, true, true, ?::jsonb, now(), now())`,
      [model.name, JSON.stringify({ modelPath: model.path })],
    );
    const deps: RetrievalDeps = { config, orm, log };
    console.log(`machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}, node ${process.version}; ${DIMS}-dimension vectors, query model ${model.name}; run ${randomBytes(2).toString('hex')}`);
    const sizes = process.env.BENCH_SNIPPETS ? process.env.BENCH_SNIPPETS.split(',').map(Number) : [10_000, 100_000];
    for (const n of sizes) {
      const t0 = performance.now();
      await fill(orm, n);
      console.log(`\n${n.toLocaleString('en')} snippets (generated in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      await firstQueries(deps);
      for (const mode of ['keyword', 'semantic', 'hybrid']) {
        // The ten questions once, unmeasured: code compiled, their common terms and rows kept. What a library's first
        // questions pay is the round of unseen questions' below.
        await measure(deps, mode, 1, QUESTIONS.length);
        for (const clients of [1, 16]) {
          // CPU per query (Node with its threads, and PostgreSQL) does not move with other load the way latency does.
          const cpu0 = await cpuSample(path.join(dir, 'postgres'), 'start');
          const profiling = process.env.BENCH_CPU_PROFILE && clients === 16 ? await startProfile() : undefined;
          const r = await measure(deps, mode, clients, clients === 1 ? 40 : 8);
          if (profiling) await profiling(`${process.env.BENCH_CPU_PROFILE}-${mode}.cpuprofile`);
          const cpu = cpuPerQuery(cpu0, await cpuSample(path.join(dir, 'postgres'), 'end'), r.count);
          // Phases of two parallel branches (hybrid's keyword and semantic) overlap, so they add up to more than the total.
          const phases = [...r.phases].map(([name, ms]) => `${name} ${pct(ms, 50).toFixed(1)}`).join(', ');
          console.log(`  ${mode.padEnd(8)} ${String(clients).padStart(2)} client(s)  p50 ${r.p50.toFixed(1).padStart(7)} ms  p95 ${r.p95.toFixed(1).padStart(7)} ms  (${r.count} queries; ${cpu}; phase medians ms: ${phases})`);
        }
      }
      // Questions never asked before, each once: the cold path, which the rounds above (ten questions, repeated) warm.
      const asked = new Set(QUESTIONS);
      for (const mode of ['keyword', 'hybrid']) {
        const cpu0 = await cpuSample(path.join(dir, 'postgres'), 'start');
        const r = await measure(deps, mode, 16, 8, unseenQuestions(16 * 8, asked));
        const cpu = cpuPerQuery(cpu0, await cpuSample(path.join(dir, 'postgres'), 'end'), r.count);
        const phases = [...r.phases].map(([name, ms]) => `${name} ${pct(ms, 50).toFixed(1)}`).join(', ');
        console.log(`  ${mode.padEnd(8)} 16 client(s), unseen questions  p50 ${r.p50.toFixed(1).padStart(7)} ms  p95 ${r.p95.toFixed(1).padStart(7)} ms  (${r.count} queries; ${cpu}; phase medians ms: ${phases})`);
      }
      if (process.env.BENCH_RERANK !== '0') await rerankRound(deps);
    }
  } finally {
    await closeProviders();
    await closeSearch();
    await orm.close();
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
