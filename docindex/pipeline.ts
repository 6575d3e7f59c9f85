import { createHash } from 'node:crypto';
import { readFile as readFileCallback, stat as statCallback } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type { QueryResult } from '@mikro-orm/core';
import type { ActivityDeps } from '../activities/deps.js';
import { startRun } from '../activities/jobs.js';
import { parseRepoConfig, CONFIG_FILE_NAMES, type PreviousVersion, type RepoConfig } from './parse/config.js';
import { loadSourceGrammars, type ParsedSnippet } from './parse/parse.js';
import { parsePool } from './parse/pool.js';
import { contentExclusion, selectFiles } from './parse/select.js';
import { PermanentError } from '../core/errors.js';
import { EMBED_BATCH_LIMITS, tokenBatches } from './embeddings/batches.js';
import { activeEmbeddingProvider, DEFAULT_PROFILE_ID, disableUnavailableDefault } from './embeddings/profiles.js';
import { embedAs, type EmbeddingProvider, ModelUnavailableError } from './embeddings/provider.js';
import { Job } from '../db/entities/job.js';
import { jobStopped } from '../jobs/ownership.js';
import type { ExtraEvent, JobPatch } from '../jobs/store.js';
import { removeWorkFolder } from '../jobs/work-folders.js';
import { Library, LibraryVersion } from './entities/library.js';
import { ContentVectors } from './content-vectors.js';
import { remoteAccess } from './remote-access.js';
import { localTags, remoteTags } from './git.js';
import { TEXT_ARRAY, textArray } from '../db/sql.js';
import { versionIdOf } from './ids.js';
import { checkoutSource } from './sources/index.js';
import { indexDetail, type IndexJobDetail } from './kind.js';
import { refreshTermStatistics } from './search/keyword.js';
import { ensureScopeIndex, EXACT_MAX_ROWS, fillVectorColumn, scopeVectors, vectorText } from './search/pgvector.js';
import { writeVectorPack } from './search/vector-pack.js';
import { StagedVectors } from './staged-vectors.js';

export interface IndexInput {
  jobId: string;
  repositoryId: string;
  versionId: string | null;
  /** From INDEXING_HEARTBEAT_TIMEOUT_MS: how soon a killed worker's attempt is retried elsewhere. */
  heartbeatTimeoutMs: number;
}

/** What each indexing activity is called with: the job's input and the workflow run calling, the job's owner. */
export interface IndexStep extends IndexInput {
  runId: string;
  /**
   * The crawl writes the staged files into the scope as it goes, in a transaction it commits at its end (`OpenSwap`),
   * and says so in `CrawlResult.written`: then there is nothing left for `replaceSnippets`.
   */
  swapInCrawl?: boolean;
  /** The crawl starts the job itself (`startRun`), with its first stage in the same write: the workflow's own step is not needed. */
  startsJob?: boolean;
}

/** How an activity reports liveness (or progress) and learns it was cancelled (or stopped for making none). */
export interface StepContext {
  heartbeat(details?: unknown): void;
  signal: AbortSignal;
  /** The attempt's number, for its own work folder. */
  attempt?: number;
  /** What the previous attempt last reported in its heartbeats. */
  resumeFrom?: unknown;
}

/** What the crawl reports in its heartbeats: how far it got. */
export interface CrawlProgress {
  stage: string;
  processedFiles?: number;
  totalFiles?: number;
}

export interface CrawlResult {
  totalFiles: number;
  changedFiles: number;
  deletedFiles: number;
  unchangedFiles: number;
  commit: string | null;
  rules: string[];
  previousVersions: PreviousVersion[];
  warnings: string[];
  /** A package's version that was read (its library's latest, for the default scope). */
  packageVersion?: string;
  /** What the source counted (a site's pages fetched and not modified, a package's archive files). */
  sourceCounts?: Record<string, number>;
  /** What the crawl's swap wrote and committed (`IndexStep.swapInCrawl`); absent when it wrote nothing. */
  written?: WriteCounts;
  /** Milliseconds spent per part of the crawl (read, parse, stage), for the index benchmark. */
  timings?: StageTimings;
}

/** Milliseconds per part of a stage, summed over the stage (parts that overlap count each in full). */
export type StageTimings = Record<string, number>;

/** Adds up the time spent in each named part of a stage. */
export class Stopwatch {
  readonly ms: StageTimings = {};

  async time<T>(part: string, work: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      this.add(part, performance.now() - t0);
    }
  }

  add(part: string, ms: number): void {
    this.ms[part] = Math.round(((this.ms[part] ?? 0) + ms) * 10) / 10;
  }
}

/** Files larger than this are not documentation anyone reads; they are skipped. */
const MAX_FILE_BYTES = 1_000_000;
const PROGRESS_EVERY_MS = 2000;
/** Files read at once while crawling. */
const READ_AHEAD = 32;
/**
 * Directories never walked into (selectFiles applies the full rules to what is left): hidden ones, whose files are
 * never indexed anyway (and among which are .git and credential folders such as .ssh), and node_modules.
 */
const neverWalked = (name: string) => name.startsWith('.') || name === 'node_modules';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
export const documentId = (repositoryId: string, versionId: string | null, filePath: string) =>
  sha(`${repositoryId}\0${versionId ?? ''}\0${filePath}`).slice(0, 32);
export const snippetId = (docId: string, s: Pick<ParsedSnippet, 'ordinal' | 'content'>) =>
  sha(`${docId}\0${s.ordinal}\0${s.content}`).slice(0, 32);

/** Files under `root`, relative; `skip` are absolute folders never entered (DATA_DIR inside a local library). */
async function walk(root: string, signal: AbortSignal, moved: () => void, skip: readonly string[] = []): Promise<string[]> {
  const out: string[] = [];
  const visit = async (dir: string, rel: string) => {
    signal.throwIfAborted();
    moved();
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      const full = path.join(dir, entry.name);
      // Symlinks are not followed: they could lead out of the repository.
      if (entry.isDirectory()) {
        if (!neverWalked(entry.name) && !skip.includes(full)) await visit(full, relPath);
      } else if (entry.isFile()) out.push(relPath);
    }
  };
  await visit(root, '');
  return out.sort();
}

async function loadScope(em: EntityManager, input: IndexInput) {
  const job = await em.findOne(Job, { id: input.jobId });
  const lib = await em.findOne(Library, { id: input.repositoryId });
  const version = input.versionId ? await em.findOne(LibraryVersion, { id: input.versionId }) : null;
  if (!job || !lib || (input.versionId && !version)) {
    throw new PermanentError(`The library or version of job ${input.jobId} was deleted`);
  }
  return { job, lib, version };
}

type StagePatch = { stage?: string; progress?: number; stageDetail?: string | null };
type Counts = { totalFiles?: number; processed?: number; toEmbed?: number; embedded?: number };

/**
 * The one way a step writes: under the job's lock, for the job's owner only (jobs/ownership.ts, `owns`). `change`
 * patches the job row; `within` writes the step's own rows in the same transaction. A run that no longer owns the
 * job writes nothing and stops here (JOB_STOPPED).
 */
async function asOwner(
  deps: ActivityDeps,
  input: IndexStep,
  change: (job: Job) => JobPatch,
  opts: { within?: (tx: EntityManager) => Promise<void>; extra?: (job: Job) => ExtraEvent[] } = {},
): Promise<void> {
  const { changed } = await deps.jobs.updateAsOwner(deps.orm.em, input, change, {
    silent: true,
    extra: opts.extra,
    within: opts.within && ((tx) => opts.within!(tx)),
  });
  if (!changed) jobStopped();
}

/** The job's detail with the counts that were given changed. */
function withCounts(detail: IndexJobDetail, counts: Counts): IndexJobDetail {
  return {
    ...detail,
    ...(counts.totalFiles !== undefined && { totalFiles: counts.totalFiles }),
    ...(counts.processed !== undefined && { processedFiles: counts.processed }),
    ...(counts.toEmbed !== undefined && { snippetsToEmbed: counts.toEmbed }),
    ...(counts.embedded !== undefined && { embeddedSnippets: counts.embedded }),
  };
}

/** The `progress` event a stage's write publishes: the job's stage, percentage and file (or snippet) counts. */
function progressEvent(job: Job): ExtraEvent {
  const d = indexDetail(job);
  return {
    event: 'progress',
    data: {
      stage: job.stage,
      stageDetail: job.stageDetail ?? null,
      progress: job.progress,
      totalFiles: d.totalFiles,
      processedFiles: d.processedFiles,
      ...(d.snippetsToEmbed !== undefined && { snippetsToEmbed: d.snippetsToEmbed, embeddedSnippets: d.embeddedSnippets ?? 0 }),
    },
  };
}

/** The one place a stage's progress is written: the job row (stage, progress, file counts) and a `progress` event. */
async function setStage(deps: ActivityDeps, input: IndexStep, patch: StagePatch, counts: Counts = {}): Promise<void> {
  await asOwner(deps, input, (job) => ({ ...patch, detail: withCounts(indexDetail(job), counts) }), { extra: (job) => [progressEvent(job)] });
}

async function readConfig(root: string): Promise<{ config: RepoConfig; warnings: string[] }> {
  for (const name of CONFIG_FILE_NAMES) {
    const text = await fs.readFile(path.join(root, name), 'utf8').catch(() => undefined);
    if (text !== undefined) {
      const { config, warnings } = parseRepoConfig(text);
      return { config, warnings: warnings.map((w) => `${name}: ${w}`) };
    }
  }
  return parseRepoConfig('{}');
}

/**
 * This attempt's own folder, `work/<jobId>/<runId>-<attempt>`: nothing another attempt or run does can delete it
 * (docs/jobs.md, "Work folders"). Folders of this run's earlier attempts are removed: Temporal has given up on them.
 */
async function attemptFolder(deps: ActivityDeps, input: IndexStep, attempt: number): Promise<string> {
  const jobDir = path.join(deps.config.dataDir, 'work', input.jobId);
  for (const name of await fs.readdir(jobDir).catch(() => [] as string[])) {
    const m = /^(.+)-(\d+)$/.exec(name);
    if (m && m[1] === input.runId && Number(m[2]) < attempt) await fs.rm(path.join(jobDir, name), { recursive: true, force: true });
  }
  return path.join(jobDir, `${input.runId}-${attempt}`);
}

/**
 * What the crawl found, file by file: the counts its progress reports, its summary and its result are made of.
 * `selected` files are those the config's rules include; reading skips some of them (binary, oversized, generated).
 */
export class CrawlTally {
  processed = 0;
  changed = 0;
  /** Of the changed files, those an earlier attempt had already parsed and staged. */
  reused = 0;
  unchanged = 0;
  deleted = 0;
  oversized = 0;
  generated = 0;

  constructor(readonly selected: number) {}

  /** Counts a file; one an earlier attempt staged (`reused`) is a changed file too. */
  count(outcome: FileOutcome): void {
    this[outcome]++;
    if (outcome === 'reused') this.changed++;
  }

  /** The files indexed: those selected, less the ones skipped on reading. */
  get indexed(): number {
    return this.selected - this.oversized - this.generated;
  }

  /** The progress reported after a chunk of files: the job goes from 10% to 70% while files are parsed. */
  progress(): { patch: StagePatch; counts: Counts } {
    const patch = { progress: 10 + Math.floor((60 * this.processed) / Math.max(this.selected, 1)), stageDetail: `${this.processed} of ${this.selected} files` };
    return { patch, counts: { processed: this.processed } };
  }

  skippedWarnings(): string[] {
    return [
      ...(this.oversized ? [`${this.oversized} binary or oversized files skipped`] : []),
      ...(this.generated ? [`${this.generated} generated files skipped`] : []),
    ];
  }

  summary(warnings: readonly string[]): string {
    const reused = this.reused ? ` (${this.reused} parsed before)` : '';
    return [`${this.changed} changed${reused}, ${this.unchanged} unchanged, ${this.deleted} removed`, ...warnings].join('; ');
  }
}

/** What became of one file: read (or not) and compared with what is stored and staged. */
type FileOutcome = 'changed' | 'reused' | 'unchanged' | 'deleted' | 'oversized' | 'generated';

/** How the crawl reports: a heartbeat every time, and the job's row and events at most every PROGRESS_EVERY_MS unless forced. */
function crawlReporter(deps: ActivityDeps, input: IndexStep, ctx: StepContext) {
  let lastReport = 0;
  return async (patch: StagePatch, counts?: Counts, force = false) => {
    ctx.heartbeat({
      stage: patch.stage ?? 'parsing',
      ...(counts?.processed !== undefined && { processedFiles: counts.processed }),
      ...(counts?.totalFiles !== undefined && { totalFiles: counts.totalFiles }),
    } satisfies CrawlProgress);
    if (!force && Date.now() - lastReport < PROGRESS_EVERY_MS) return;
    lastReport = Date.now();
    await setStage(deps, input, patch, counts);
  };
}
type CrawlReporter = ReturnType<typeof crawlReporter>;

/** A file's size and modification time in nanoseconds (decimal: bigint columns), as `fs.stat` gave them before it was read. */
export type FileStat = { size: string; mtimeNs: string };

const sameStat = (a: FileStat | null, b: FileStat | null) => a?.size === b?.size && a?.mtimeNs === b?.mtimeNs;

/** A staged snippet: parsed, with its content's code words when the parse pool gave them (staged-vectors.ts). */
type StagedSnippet = ParsedSnippet & { codeWords?: string };

type StagedRow = {
  job_id: string;
  file_path: string;
  checksum: string;
  snippets: StagedSnippet[];
  size: string | null;
  mtime_ns: string | null;
  /** The file's content is the stored one: the swap only updates its document's stat. */
  stat_only: boolean;
  /**
   * Where its snippets' content parts of their keyword vectors (docindex/content-vectors.ts) are in the batch's
   * `tsvector[]`: elements `content_from` to `content_to` (1-based), filled when the batch is written.
   */
  content_from?: number;
  content_to?: number;
};

/** What identifies a staged file's content and stat: a file staged with the same one need not be parsed again. */
const stagedKey = (checksum: string, stat: FileStat | null) => `${checksum}\0${stat?.size ?? ''}\0${stat?.mtimeNs ?? ''}`;

/**
 * The job's `staged_document` rows as this attempt writes them, in batches, for the job's owner only (`asOwner`).
 * `earlier` holds what an earlier attempt (or run) of the job staged: a file staged with the same checksum is not
 * parsed again, and at the end every staged row this attempt does not stand for is dropped.
 */
export class Staging {
  private batch: StagedRow[] = [];
  /** The staged rows this attempt stands for: changed files and deleted ones. */
  private readonly keep: string[] = [];
  /** The staged files' keyword vectors, computed beside the crawl. */
  private readonly vectors: StagedVectors;
  /** Their content parts, put together in Node from the vectors of the words they hold. */
  private readonly contentVectors = new ContentVectors();
  /** The batch being written. */
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: ActivityDeps,
    private readonly input: IndexStep,
    private readonly earlier: ReadonlyMap<string, string>,
    private readonly clock = new Stopwatch(),
    /** The swap that writes each batch once its vectors are filled, when the crawl begins it (`OpenSwap`). */
    private readonly swap?: OpenSwap,
  ) {
    this.vectors = new StagedVectors(() => deps.orm.em.fork(), input.jobId, input.runId, (part, work) => clock.time(part, work));
  }

  /** What the job has staged so far with its snippets, file path to `stagedKey` (stat-only rows have no snippets). */
  static async earlierRows(em: EntityManager, jobId: string): Promise<Map<string, string>> {
    const rows: { file_path: string; checksum: string; size: string | null; mtime_ns: string | null }[] = await em.execute(
      'select file_path, checksum, size::text, mtime_ns::text from staged_document where job_id = ? and not stat_only',
      [jobId],
    );
    return new Map(rows.map((r) => [r.file_path, stagedKey(r.checksum, r.size === null || r.mtime_ns === null ? null : { size: r.size, mtimeNs: r.mtime_ns })]));
  }

  /**
   * Whether an earlier attempt staged this file as it is now, content and stat: it need not be parsed again (a file
   * touched in between is, so that its document gets the stat a first attempt would give it).
   */
  reusable(rel: string, checksum: string, stat: FileStat | null = null): boolean {
    return this.earlier.get(rel) === stagedKey(checksum, stat);
  }

  /** Stages a changed file with its snippets and stat, or none when it is `reusable`: then it is `reused`. */
  async changed(rel: string, checksum: string, snippets: StagedSnippet[] | null, stat: FileStat | null = null): Promise<'changed' | 'reused'> {
    this.keep.push(rel);
    if (!snippets) return 'reused';
    await this.add({ job_id: this.input.jobId, file_path: rel, checksum, snippets, size: stat?.size ?? null, mtime_ns: stat?.mtimeNs ?? null, stat_only: false });
    return 'changed';
  }

  /** Stages the new stat of a file whose content did not change (touched, or stored without one): its snippets stay. */
  async restat(rel: string, checksum: string, stat: FileStat | null): Promise<void> {
    this.keep.push(rel);
    await this.add({ job_id: this.input.jobId, file_path: rel, checksum, snippets: [], size: stat?.size ?? null, mtime_ns: stat?.mtimeNs ?? null, stat_only: true });
  }

  /** Stages a file that is gone (or now excluded) with no content: the write stage removes it. */
  async deleted(rel: string): Promise<void> {
    this.keep.push(rel);
    await this.add({ job_id: this.input.jobId, file_path: rel, checksum: '', snippets: [], size: null, mtime_ns: null, stat_only: false });
  }

  /**
   * Writes what is left, then drops what an earlier attempt staged and this one did not see (changed in between),
   * and waits for the staged files' vectors (calling `beat` now and then meanwhile).
   */
  async finish(beat?: () => void): Promise<void> {
    await this.flush(`delete from staged_document where job_id = ? and file_path <> all(${TEXT_ARRAY})`, [this.input.jobId, textArray(this.keep)]);
    await this.clock.time('vectors.wait', () => this.vectors.finish(beat));
  }

  private async add(row: StagedRow): Promise<void> {
    this.batch.push(row);
    if (this.batch.length >= 100) await this.flush();
  }

  /**
   * Writes the batch while the crawl goes on reading and parsing: one batch in flight, written in order, its failure
   * thrown by the next flush. `then` runs after it, and that flush waits for it.
   */
  private async flush(then?: string, params: unknown[] = []): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    await this.inFlight;
    this.inFlight = this.writeBatch(batch, then, params);
    this.inFlight.catch(() => undefined);
    if (then) await this.inFlight;
  }

  /** Resolves once no batch is being written, whether its write failed or not. */
  settled(): Promise<void> {
    return this.inFlight.catch(() => undefined);
  }

  private async writeBatch(batch: StagedRow[], then: string | undefined, params: unknown[]): Promise<void> {
    const withSnippets = batch.filter((r) => r.snippets.length);
    // A batch of stats and deletions only (a re-index of touched files) has no vectors to put together.
    const vectors = withSnippets.length
      ? await this.clock.time('content', () =>
          this.contentVectors.of(this.deps.orm.em.fork(), withSnippets.flatMap((r) => r.snippets.map((sn) => sn.content))),
        )
      : null;
    let k = 0;
    for (const r of withSnippets) {
      r.content_from = k + 1;
      r.content_to = k += r.snippets.length;
    }
    const rows = JSON.stringify(batch);
    await this.clock.time('stage', () => this.write(rows, vectors, then, params));
    const paths = withSnippets.map((r) => r.file_path);
    const filled = this.vectors.add(paths);
    if (paths.length) this.swap?.write(paths, filled);
  }

  private async write(rows: string, vectors: Buffer | null, then: string | undefined, params: unknown[]): Promise<void> {
    await asOwner(this.deps, this.input, () => ({}), {
      within: async (tx) => {
        if (rows !== '[]') {
          // The rows (megabytes of JSON) go as a bound parameter: `execute` writes values into the SQL text, escaping
          // them character by character, which made most of the crawl's garbage. Their content vectors go beside them
          // in binary (a Buffer is sent so), each row taking its slice. Read as `jsonb`, the rows are parsed once: read
          // as `json`, each row's snippets were parsed again into their `jsonb` column.
          await (tx.getTransactionContext<Knex.Transaction>() ?? tx.getKnex()).raw(
            `insert into staged_document (job_id, file_path, checksum, snippets, size, mtime_ns, stat_only, content_vectors)
             select t.job_id, t.file_path, t.checksum, t.snippets, t.size, t.mtime_ns, t.stat_only, (?::tsvector[])[t.content_from:t.content_to]
             from jsonb_to_recordset(?::jsonb)
               as t(job_id text, file_path text, checksum text, snippets jsonb, size bigint, mtime_ns bigint, stat_only boolean, content_from int, content_to int)
             on conflict (job_id, file_path) do update set checksum = excluded.checksum, snippets = excluded.snippets, vectors = null,
               content_vectors = excluded.content_vectors,
               size = excluded.size, mtime_ns = excluded.mtime_ns, stat_only = excluded.stat_only`,
            [vectors, rows],
          );
        }
        if (then) await tx.execute(then, params);
      },
    });
  }
}

/**
 * A stat is kept only for a file modified at least this long before it was read: a write in the same tick of the
 * file system's clock right after the read (same size) would leave the same mtime, and go unseen.
 */
const RACY_MS = 2000n;

/** A file as read: its content and the stat to store (null: none kept), or the stored checksum when its stat is the stored one. */
type FileRead = { bytes: Buffer; stat: FileStat | null } | { stored: string };

/**
 * A file's stat, by the callback form of `fs.stat`: the promise form (fs/promises) cost half as much again, the largest
 * part of a no-change crawl (bench/README.md, "Index"). Not `statSync`: a folder on a network mount that stops
 * answering would hold the whole process, the API included, where this holds one of libuv's threads.
 */
const statOf = promisify(statCallback);
/**
 * The callback form, as `statOf`: `fs/promises` reads a file in four steps each with a promise and a FileHandle to
 * collect. In a one-off script (not in this repository), 2,400 files of node_modules took 148 ms of CPU this way and
 * 218 ms through `fs/promises` (medians of three, after a first pass to warm the page cache).
 */
const readFileOf = promisify(readFileCallback);

/**
 * A file's content, or why it is not indexed: binary or over MAX_FILE_BYTES, or generated (parse/select.ts). A file
 * whose size and mtime are those stored with its document is not read: its stored checksum stands for it. It was not
 * excluded then and its content is the same, so it is not now either: no stat is kept for a file included only because
 * `includeFiles` exempts it from contentExclusion, so that it is read (and excluded) if the config no longer does.
 */
async function readSelected(s: CrawlScope, rel: string): Promise<FileRead | 'oversized' | 'generated'> {
  const file = path.join(s.root, rel);
  const st = await statOf(file, { bigint: true });
  const settled = st.mtimeNs < (BigInt(Date.now()) - RACY_MS) * 1_000_000n;
  const stat = s.keepStats && settled ? { size: String(st.size), mtimeNs: String(st.mtimeNs) } : null;
  const stored = s.stored.get(rel);
  if (stat && stored?.stat && sameStat(stat, stored.stat)) return { stored: stored.checksum };
  if (st.size > MAX_FILE_BYTES) return 'oversized';
  const bytes = await readFileOf(file);
  if (bytes.subarray(0, 8000).includes(0)) return 'oversized'; // binary
  const head = bytes.subarray(0, 2000).toString('utf8');
  if (contentExclusion(rel, Number(st.size), head, s.config)) return 'generated';
  const exempted = s.config.includeFiles.length > 0 && contentExclusion(rel, Number(st.size), head, s.withoutIncludes) !== null;
  return { bytes, stat: exempted ? null : stat };
}

/** A stored document: its content's checksum and the file's stat when it was read (null: none kept). */
type StoredDocument = { checksum: string; stat: FileStat | null };

/** What the crawl works on: the checked-out files, the repository's config, and the scope's stored documents. */
interface CrawlScope {
  root: string;
  config: RepoConfig;
  /** The config without `includeFiles`: what contentExclusion says of a file when nothing exempts it. */
  withoutIncludes: RepoConfig;
  /** Whether files' stats are stored: only for files read in place (a clone or download is new every time). */
  keepStats: boolean;
  stored: ReadonlyMap<string, StoredDocument>;
  staging: Staging;
  tally: CrawlTally;
  report: CrawlReporter;
  clock: Stopwatch;
}

/**
 * One file as read: skipped, unchanged (with a new stat to store, when `restat`), or changed with its stat and its
 * snippets on the way (null: staged before as it is).
 */
type ReadFile =
  | { rel: string; skipped: 'oversized' | 'generated' }
  | { rel: string; checksum: string; unchanged: true; restat?: { stat: FileStat | null } }
  | { rel: string; checksum: string; stat: FileStat | null; snippets: Promise<StagedSnippet[]> | null };

/** Reads a chunk of files at once and sends the changed ones to the parse threads (docindex/parse/pool.ts). */
async function readChunk(s: CrawlScope, chunk: readonly string[]): Promise<ReadFile[]> {
  const contents = await s.clock.time('read', () => Promise.all(chunk.map((rel) => readSelected(s, rel))));
  return chunk.map((rel, j): ReadFile => {
    const read = contents[j]!;
    if (typeof read === 'string') return { rel, skipped: read };
    if ('stored' in read) return { rel, checksum: read.stored, unchanged: true };
    const checksum = sha(read.bytes);
    const stored = s.stored.get(rel);
    if (stored?.checksum === checksum) return { rel, checksum, unchanged: true, ...(!sameStat(stored.stat, read.stat) && { restat: { stat: read.stat } }) };
    const snippets = s.staging.reusable(rel, checksum, read.stat) ? null : parsePool().parse(rel, read.bytes.toString('utf8'));
    return { rel, checksum, stat: read.stat, snippets };
  });
}

/**
 * Reads, compares and stages the selected files. Reads overlap (I/O-bound), and the next chunk is read and parsed
 * while this one is staged; files are parsed on worker threads and staged in file order, so the staged rows are
 * what parsing them one by one gives. Returns the files read (whatever their outcome).
 */
async function stageFiles(s: CrawlScope, files: readonly string[], signal: AbortSignal): Promise<Set<string>> {
  const seen = new Set<string>();
  let next = files.length ? readChunk(s, files.slice(0, READ_AHEAD)) : undefined;
  for (let start = 0; next; start += READ_AHEAD) {
    signal.throwIfAborted();
    const chunk = await next;
    const after = start + READ_AHEAD;
    next = after < files.length ? readChunk(s, files.slice(after, after + READ_AHEAD)) : undefined;
    // A rejected read-ahead is seen when its chunk's turn comes (or the crawl failed before and nobody waits).
    next?.catch(() => undefined);
    for (const file of chunk) {
      if ('skipped' in file) s.tally.count(file.skipped);
      else {
        seen.add(file.rel);
        if ('unchanged' in file) {
          if (file.restat) await s.staging.restat(file.rel, file.checksum, file.restat.stat);
          s.tally.count('unchanged');
        } else s.tally.count(await s.staging.changed(file.rel, file.checksum, file.snippets && (await s.clock.time('parse', () => file.snippets!)), file.stat));
      }
    }
    s.tally.processed = start + chunk.length;
    const { patch, counts } = s.tally.progress();
    await s.report(patch, counts);
  }
  return seen;
}

/** Files stored before and not seen now (gone, or now excluded) are staged empty. */
async function stageDeleted(s: CrawlScope, seen: ReadonlySet<string>): Promise<void> {
  for (const rel of s.stored.keys()) {
    if (seen.has(rel)) continue;
    s.tally.count('deleted');
    await s.staging.deleted(rel);
  }
}

/**
 * The config's previousVersions that can be registered: only tags that exist, since a missing one would fail every
 * re-index (the others become a warning). Only a repository's default branch has them, whose root is the local folder
 * as resolved and checked by `checkoutRepository`.
 */
async function existingPreviousVersions(deps: ActivityDeps, lib: Library, version: LibraryVersion | null, s: CrawlScope, warnings: string[], signal: AbortSignal) {
  // A package's or site's versions come from its registry (docindex/refresh/), not from a repository's config.
  const wanted = version || (lib.source !== 'local' && lib.source !== 'git-host') ? [] : s.config.previousVersions;
  if (!wanted.length) return wanted;
  const existing = lib.source === 'local' ? new Set((await localTags(s.root)).map((t) => t.tag)) : new Set((await remoteTags(lib.sourceUrl, remoteAccess(deps.config, lib, signal))).keys());
  const missing = wanted.filter((v) => !existing.has(v.tag));
  if (missing.length) warnings.push(`previousVersions: no tag ${missing.map((v) => v.tag).join(', ')}; not registered`);
  return wanted.filter((v) => existing.has(v.tag));
}

/** The scope's stored documents by file path: a file with the same checksum now (or the same stat) is unchanged. */
async function storedDocuments(em: EntityManager, lib: Library, version: LibraryVersion | null): Promise<Map<string, StoredDocument>> {
  // Plain rows: hydrating thousands of entities costs more than the rest of a no-change crawl's bookkeeping.
  const docs: { file_path: string; checksum: string; size: string | null; mtime_ns: string | null }[] = await em.execute(
    `select file_path, checksum, size::text, mtime_ns::text from library_document where repository_id = ? and coalesce(version_id, '') = ?`,
    [lib.id, version?.id ?? ''],
  );
  return new Map(docs.map((d) => [d.file_path, { checksum: d.checksum, stat: d.size === null || d.mtime_ns === null ? null : { size: d.size, mtimeNs: d.mtime_ns } }]));
}

/** What an earlier attempt of the job staged, said in the log when there is any: this attempt resumes from it. */
async function resumeFrom(deps: ActivityDeps, em: EntityManager, input: IndexStep, ctx: StepContext): Promise<Map<string, string>> {
  const staged = await Staging.earlierRows(em, input.jobId);
  if (staged.size) {
    const earlier = ctx.resumeFrom as CrawlProgress | undefined;
    deps.log.info('resuming a crawl from what an earlier attempt staged', { jobId: input.jobId, staged: staged.size, earlierAttemptReached: earlier?.processedFiles ?? null });
  }
  return staged;
}

/** What the job says while its source is read. */
function crawlingDetail(lib: Library): string {
  if (lib.source === 'local') return `reading ${lib.sourceUrl}`;
  if (lib.source === 'website') return `reading the site ${lib.sourceUrl}`;
  if (lib.source === 'git-host') return 'fetching the repository';
  return `fetching the ${lib.source} package ${lib.sourceUrl}`;
}

/**
 * Stages crawl and parse. Changed and new files are parsed into `staged_document`; deleted files are staged with
 * no content; unchanged files (same checksum as stored) are not parsed again, and not even read when their size and
 * mtime are the stored ones (`readSelected`); an unchanged file with a new stat has it staged alone (`restat`). Nothing a reader sees changes here.
 * A retried attempt resumes: files an earlier attempt (or run) of the job already staged with the same checksum
 * are not parsed again, and staged rows this attempt did not produce are dropped at the end.
 */
export async function crawlAndParse(deps: ActivityDeps, input: IndexStep, ctx: StepContext): Promise<CrawlResult> {
  const em = deps.orm.em.fork();
  const { lib, version } = await loadScope(em, input);
  const crawling = { stage: 'crawling', progress: 2, stageDetail: crawlingDetail(lib) };
  // Before anything is written: a run that may not take the job stops here. An attempt after the one that started
  // the job reports its stage as any crawl does.
  const started = input.startsJob && (await startRun(deps, input, { patch: crawling, extra: (job) => [progressEvent(job)] }));
  const workdir = await attemptFolder(deps, input, ctx.attempt ?? 1);
  const clock = new Stopwatch();
  const swap = input.swapInCrawl ? new OpenSwap(deps, input, clock) : undefined;
  const staging = new Staging(deps, input, await resumeFrom(deps, em, input, ctx), clock, swap);
  const report = crawlReporter(deps, input, ctx);
  try {
    if (!started) await report(crawling, undefined, true);
    const t0 = performance.now();
    const source = await checkoutSource(deps, lib, version, workdir, {
      signal: ctx.signal,
      // git's own progress (objects received, files checked out), or the pages and bytes read, is the crawl's progress meanwhile.
      onProgress: (what) => ctx.heartbeat({ stage: 'crawling', git: what } satisfies CrawlProgress & { git: string }),
      heartbeat: (what) => ctx.heartbeat({ stage: 'crawling', source: what } satisfies CrawlProgress & { source: string }),
    });
    const { root, commit, skip } = source;
    const { config, warnings } = await readConfig(root);
    warnings.unshift(...source.warnings);
    const files = selectFiles(await walk(root, ctx.signal, () => ctx.heartbeat({ stage: 'crawling' } satisfies CrawlProgress), skip), config).included;
    clock.add('crawl', performance.now() - t0);
    const tally = new CrawlTally(files.length);
    const outside = path.relative(workdir, root);
    const keepStats = outside === '..' || outside.startsWith(`..${path.sep}`) || path.isAbsolute(outside);
    const withoutIncludes = { ...config, includeFiles: [] };
    const s: CrawlScope = { root, config, withoutIncludes, keepStats, stored: await clock.time('stored', () => storedDocuments(em, lib, version)), staging, tally, report, clock };
    await report({ stage: 'parsing', progress: 10, stageDetail: warnings.length ? warnings.join('; ') : `${files.length} files` }, { totalFiles: files.length, processed: 0 }, true);

    await clock.time('grammars', () => loadSourceGrammars(files));
    await stageDeleted(s, await stageFiles(s, files, ctx.signal));
    await staging.finish(() => ctx.heartbeat({ stage: 'parsing', processedFiles: tally.processed, totalFiles: files.length } satisfies CrawlProgress));
    warnings.push(...s.tally.skippedWarnings());
    const previousVersions = await existingPreviousVersions(deps, lib, version, s, warnings, ctx.signal);
    await report({ progress: 70, stageDetail: tally.summary(warnings) }, { totalFiles: tally.indexed, processed: files.length }, true);
    const written = await swap?.commit({ rules: config.rules, previousVersions }, () => ctx.heartbeat({ stage: 'writing' } satisfies CrawlProgress));
    return {
      totalFiles: tally.indexed, changedFiles: tally.changed, deletedFiles: tally.deleted, unchangedFiles: tally.unchanged, commit, rules: config.rules, previousVersions, warnings,
      ...(source.packageVersion && { packageVersion: source.packageVersion }),
      ...(source.counts && { sourceCounts: source.counts }),
      ...(written && { written }),
      timings: clock.ms,
    };
  } finally {
    // A crawl that fails leaves no write of its behind it, to land after a retry's, and no swap begun.
    await staging.settled();
    await swap?.close();
    await removeWorkFolder(workdir);
  }
}

type WriteCounts = { documentsWritten: number; documentsRemoved: number; snippetsWritten: number; timings?: StageTimings };
/** What two parts of one swap wrote, together (their timings left out). */
const addCounts = (a: WriteCounts, b: WriteCounts): WriteCounts => ({
  documentsWritten: a.documentsWritten + b.documentsWritten,
  documentsRemoved: a.documentsRemoved + b.documentsRemoved,
  snippetsWritten: a.snippetsWritten + b.snippetsWritten,
});
export const NOTHING_WRITTEN: WriteCounts = { documentsWritten: 0, documentsRemoved: 0, snippetsWritten: 0 };

/** SQL of a file's document id in the scope of the first two `?` (repository, version or ''): `documentId` computed by PostgreSQL. */
const DOCUMENT_ID_SQL = (filePath: string) =>
  `left(encode(sha256(convert_to(?, 'UTF8') || '\\x00'::bytea || convert_to(?, 'UTF8') || '\\x00'::bytea || convert_to(${filePath}, 'UTF8')), 'hex'), 32)`;
/** SQL of a snippet's id from its document's id, ordinal and content: `snippetId` computed by PostgreSQL. */
const SNIPPET_ID_SQL = (docId: string, ordinal: string, content: string) =>
  `left(encode(sha256(convert_to(${docId}, 'UTF8') || '\\x00'::bytea || convert_to(${ordinal}::text, 'UTF8') || '\\x00'::bytea || convert_to(${content}, 'UTF8')), 'hex'), 32)`;

/** The staged files a part of the swap takes: all of the job's, only those named, or all but those named. */
type StagedFiles = { only?: readonly string[]; except?: readonly string[] };

/**
 * The job's staged rows that `which` takes, as a subquery, with its parameters. Named files are looked up one by one
 * by the table's key (a lateral subquery, which `offset 0` keeps the planner from flattening): the statistics of a
 * table whose rows live for minutes never say how many a job has, and with a list filter the planner scanned all of
 * them, twice per batch of 100 files (a nested loop that read the list again for each row; bench/README.md, "Index").
 */
function stagedRows(jobId: string, which: StagedFiles): [string, unknown[]] {
  if (which.only) {
    return [
      `(select s.* from json_array_elements_text(?::json) as p(path)
          cross join lateral (select * from staged_document s where s.job_id = ? and s.file_path = p.path offset 0) s)`,
      [textArray(which.only), jobId],
    ];
  }
  if (which.except?.length) {
    return [`(select * from staged_document where job_id = ? and file_path not in (select json_array_elements_text(?::json)))`, [jobId, textArray(which.except)]];
  }
  return ['(select * from staged_document where job_id = ?)', [jobId]];
}

/**
 * Replaces the stored documents of the staged files `which` takes with them, inside PostgreSQL (the snippets never
 * come back to Node): their stored documents go (their snippets with them), then the changed files' documents and
 * snippets are inserted from the staged rows in one statement each; deleted files (staged empty) are only removed.
 * Files staged `stat_only` keep their documents and snippets: only the stored stat changes, and only while the stored
 * content is the one staged. The staged rows stay, for the caller to delete.
 */
async function writeStaged(tx: EntityManager, input: IndexStep, lib: Library, version: LibraryVersion | null, which: StagedFiles, clock: Stopwatch): Promise<WriteCounts> {
  const scope = [lib.id, version?.id ?? ''];
  const [rows, rowsParams] = stagedRows(input.jobId, which);
  const [staged] = (await tx.execute(
    `select count(*) filter (where checksum <> '' and not stat_only)::int as written, count(*) filter (where checksum = '')::int as removed,
       count(*) filter (where stat_only)::int as restated
     from ${rows} staged`,
    rowsParams,
  )) as [{ written: number; removed: number; restated: number }];
  const counts: WriteCounts = { documentsWritten: staged.written, documentsRemoved: staged.removed, snippetsWritten: 0 };
  if (staged.written || staged.removed) {
    await clock.time('swap.documents', async () => {
      // Each stored document looked up by its scope and path, then deleted by key, for the same reason as in `stagedRows`.
      await tx.execute(
        `delete from library_document where id = any(array(
           select d.id from ${rows} staged
             cross join lateral (select id from library_document d where d.repository_id = ? and coalesce(d.version_id, '') = ? and d.file_path = staged.file_path offset 0) d
           where not staged.stat_only))`,
        [...rowsParams, ...scope],
      );
      await tx.execute(
        `insert into library_document (id, repository_id, version_id, file_path, checksum, size, mtime_ns, indexed_at)
         select ${DOCUMENT_ID_SQL('file_path')}, ?, ?, file_path, checksum, size, mtime_ns, now() from ${rows} staged where checksum <> '' and not stat_only`,
        [...scope, lib.id, version?.id ?? null, ...rowsParams],
      );
    });
    // In file order and each file's snippets in order, as they were inserted from Node before. The vectors were
    // computed while staging (StagedVectors); one missing (no array) is computed by the snippet table's trigger.
    // Each snippet is zipped with its vector by `rows from`, which reads the array once: subscripting it read the
    // whole array from its TOAST once per snippet, quadratic in a file's snippets (bench/README.md, "Index"). The fill
    // writes one vector per snippet; a longer array would pad a row with no content, which the insert refuses.
    // The files are sorted alone, in the subquery (its `order by` keeps it from being merged into the join), so
    // only each file's few snippets are sorted after it: sorting the joined rows, content and vectors, spilled 64 MB
    // to disk for the benchmark's 33,841 snippets (bench/README.md, "Index").
    const inserted = await clock.time('swap.snippets', () => tx.execute<QueryResult>(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at, search_vector)
       select ${SNIPPET_ID_SQL('d.doc_id', 's.ordinal', 's.content')}, d.doc_id, ?, ?, s.type, s.title, s.content, s.language, s.breadcrumb, s.token_count, s.ordinal, now(),
         s.vector
       from (select ${DOCUMENT_ID_SQL('file_path')} as doc_id, file_path, snippets, vectors from ${rows} staged where checksum <> '' and not stat_only order by file_path) d,
         rows from (jsonb_to_recordset(d.snippets) as (type text, title text, content text, language text, breadcrumb text, "tokenCount" int, ordinal int), unnest(d.vectors))
           with ordinality as s(type, title, content, language, breadcrumb, token_count, ordinal, vector, n)
       order by d.file_path, s.n`,
      [lib.id, version?.id ?? null, ...scope, ...rowsParams],
      'run',
    ));
    counts.snippetsWritten = inserted.affectedRows;
  }
  if (staged.restated) {
    await clock.time('swap.stats', () => tx.execute(
      `update library_document d set size = s.size, mtime_ns = s.mtime_ns from ${rows} s
       where s.stat_only and d.repository_id = ? and coalesce(d.version_id, '') = ? and d.file_path = s.file_path and d.checksum = s.checksum`,
      [...rowsParams, ...scope],
    ));
  }
  return counts;
}

/** New vectors stay in the GIN index's pending list until the swap merges it (`swapStaged`), not every 4 MB. */
const GIN_PENDING_UNBOUNDED = `set local gin_pending_list_limit = '1GB'`;
const GIN_MERGE = `select gin_clean_pending_list('snippet_search_vector_index')`;

/**
 * Replaces the scope's documents and snippets with the job's staged files (`writeStaged`), drops the staged rows,
 * and brings the keyword index and term statistics up to date, in the caller's transaction. `before` is what the
 * transaction already wrote of them (`OpenSwap`), the files `written`.
 */
async function swapStaged(
  tx: EntityManager, input: IndexStep, lib: Library, version: LibraryVersion | null,
  { before = NOTHING_WRITTEN, written = [], clock = new Stopwatch() }: { before?: WriteCounts; written?: readonly string[]; clock?: Stopwatch } = {},
): Promise<WriteCounts> {
  const t0 = performance.now();
  // New vectors go to the GIN index's pending list and are merged into it at the end (and every few hundred files
  // by `OpenSwap`): far cheaper than merging every 4 MB (the default limit), and no search scans a long pending list
  // after the commit.
  await tx.execute(GIN_PENDING_UNBOUNDED);
  const counts = addCounts(before, await writeStaged(tx, input, lib, version, { except: written }, clock));
  await tx.execute('delete from staged_document where job_id = ?', [input.jobId]);
  if (counts.snippetsWritten) await clock.time('swap.gin', () => tx.execute(GIN_MERGE));
  clock.add('swap', performance.now() - t0);
  // Keyword search's term frequencies change with the snippets, in the same transaction (docindex/search/keyword.ts); a
  // run that changed no file leaves them as they are (a retry after this commit finds nothing staged). So does the
  // scope's search stamp, which every API's caches are keyed by: a run that ends after this commit but before its
  // statistics (cancelled while embedding, or its embedding failed) must not leave them serving the snippets it
  // replaced. The statistics move it again, for the vectors embedded meanwhile.
  if (counts.documentsWritten || counts.documentsRemoved) {
    await clock.time('terms', () => refreshTermStatistics(tx, { repositoryId: lib.id, versionId: version?.id ?? null }));
    if (version) await tx.execute('update library_version set search_stamp = clock_timestamp() where id = ?', [version.id]);
    else await tx.execute('update library set search_stamp = clock_timestamp() where id = ?', [lib.id]);
  }
  return { ...counts, timings: clock.ms };
}

/** Stores the config's rules and, for the default branch, registers its previousVersions (as pending versions). */
async function storeConfig(tx: EntityManager, lib: Library, version: LibraryVersion | null, crawl: Pick<CrawlResult, 'rules' | 'previousVersions'>): Promise<void> {
  const versionId = version?.id ?? null;
  // The default branch's rules are the repository-wide row; a version's go to that version's row.
  await tx.execute(
    `insert into library_rules (id, repository_id, version_id, rules, updated_at) values (?, ?, ?, ?::jsonb, now())
     on conflict (repository_id, coalesce(version_id, '')) do update set rules = excluded.rules, updated_at = now()`,
    [`${lib.id}@${versionId ?? ''}`, lib.id, versionId, JSON.stringify(crawl.rules)],
  );
  if (version) return;
  for (const pv of crawl.previousVersions) {
    await tx.execute(
      `insert into library_version (id, repository_id, tag, title, state, total_snippets, created_at)
       values (?, ?, ?, ?, 'pending', 0, now()) on conflict do nothing`,
      [versionIdOf(lib.id, pv.tag), lib.id, pv.tag, pv.title ?? null],
    );
  }
}

/** The advisory lock that serialises the swaps of one library (or version): `hashtext` of this key. */
export const scopeLockKey = (scope: { repositoryId: string; versionId: string | null }) => `index-scope:${scope.repositoryId}@${scope.versionId ?? ''}`;

/**
 * Stage write: swaps the staged files in, in one transaction, so a reader sees the old snippets or the new ones,
 * never a mix, with their term statistics. Also stores the rules and registers previousVersions. Safe to retry: it
 * reads only the staging rows. Only the job's owner swaps, checked under the job's lock for the whole transaction.
 */
export async function replaceSnippets(deps: ActivityDeps, input: IndexStep, crawl: CrawlResult): Promise<WriteCounts> {
  const stage = { stage: 'writing', progress: 75, stageDetail: null };
  // A swap with files to write is announced first, as it can take long; one with none (a crawl that changed nothing)
  // writes its stage in its own transaction, one write fewer.
  const short = !crawl.changedFiles && !crawl.deletedFiles;
  if (!short) await setStage(deps, input, stage);
  let counts: WriteCounts | undefined;
  await asOwner(deps, input, () => (short ? stage : {}), {
    ...(short && { extra: (job: Job) => [progressEvent(job)] }),
    within: async (tx) => {
      await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [scopeLockKey(input)]);
      const { lib, version } = await loadScope(tx, input);
      counts = await swapStaged(tx, input, lib, version);
      await storeConfig(tx, lib, version, crawl);
    },
  });
  return counts!;
}

/** How often the crawl's end says it is alive while it waits for the swap's writes. */
const SWAP_BEAT_MS = 5000;
/**
 * How long the swap's transaction may sit idle, in heartbeat timeouts, before PostgreSQL ends it. A live crawl writes
 * a batch of 100 files far sooner (it is stopped when it has not moved for one heartbeat timeout); a worker frozen
 * with its transaction open would otherwise hold the scope's lock, and any retry of the job, until its connection
 * died.
 */
const SWAP_IDLE_HEARTBEATS = 10;
/**
 * Files written between merges of the keyword index's pending list, so that the commit merges only the last ones':
 * merging in pieces costs more than once (0.4 to 0.5 s against 0.3 for the benchmark's first index), but while the
 * crawl goes on instead of after it.
 */
const SWAP_GIN_MERGE_FILES = 400;

/**
 * How many swaps may be open at once in a process. Each holds one of the database pool's connections (ten: db/orm.ts)
 * for its crawl's length, and the crawls' other writes need the rest: with as many open swaps as connections, every
 * crawl would wait for a connection none of them gives back. A crawl that finds none free leaves its swap to
 * `replaceSnippets`, as before.
 */
export class SwapSlots {
  private taken = 0;
  constructor(readonly max: number) {}
  take(): boolean {
    if (this.taken >= this.max) return false;
    this.taken++;
    return true;
  }
  give(): void {
    this.taken--;
  }
}
const swapSlots = new SwapSlots(4);

/**
 * The swap begun while the crawl goes on (`IndexStep.swapInCrawl`): one transaction on a connection of its own writes
 * each batch of staged files into the scope's documents and snippets once their vectors are filled (`writeStaged`);
 * at the crawl's end it swaps the rest (an earlier attempt's files, deleted files, new stats), stores the config, and
 * commits under the job's lock, for its owner only, as `replaceSnippets` does. So a reader still sees the old
 * snippets or the new ones, and the swap's inserts run while the crawl reads and parses instead of after it
 * (bench/README.md, "Index"). A crawl that fails rolls it back; the staged rows, which it drops only at its commit,
 * stay for the retry to resume from. What it costs: a transaction open for the crawl's length, holding the scope's
 * lock and a connection, and holding back PostgreSQL's clean-up of older row versions meanwhile
 * (docs/documentation-index.md, "Writing while crawling").
 */
export class OpenSwap {
  private tx: EntityManager | undefined;
  private writes: Promise<void> = Promise.resolve();
  private failure: unknown;
  private written = NOTHING_WRITTEN;
  /** The files written so far. */
  private readonly paths: string[] = [];
  private ended = false;
  /** No slot was free at the first batch: this crawl writes nothing. */
  private declined = false;

  constructor(
    private readonly deps: ActivityDeps,
    private readonly input: IndexStep,
    private readonly clock: Stopwatch,
    private readonly slots = swapSlots,
  ) {}

  /** Writes the staged files `paths` once `filled` (their vectors) resolves true, after those given before. */
  write(paths: readonly string[], filled: Promise<boolean>): void {
    this.writes = this.writes.then(async () => {
      if (this.failure || !(await filled)) return;
      try {
        const tx = await this.begin();
        if (!tx) return;
        const { lib, version } = await loadScope(tx, this.input);
        this.written = addCounts(this.written, await writeStaged(tx, this.input, lib, version, { only: paths }, this.clock));
        this.paths.push(...paths);
        if (this.paths.length % SWAP_GIN_MERGE_FILES < paths.length) await this.clock.time('swap.gin.crawl', () => tx.execute(GIN_MERGE));
      } catch (err) {
        this.failure ??= err;
      }
    });
  }

  private async begin(): Promise<EntityManager | undefined> {
    if (this.tx || this.declined) return this.tx;
    if (!this.slots.take()) {
      this.declined = true;
      return undefined;
    }
    const tx = this.deps.orm.em.fork();
    try {
      await tx.begin();
    } catch (err) {
      this.slots.give();
      throw err;
    }
    this.tx = tx;
    await tx.execute(`select set_config('idle_in_transaction_session_timeout', ?, true)`, [String(SWAP_IDLE_HEARTBEATS * this.input.heartbeatTimeoutMs)]);
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [scopeLockKey(this.input)]);
    await tx.execute(GIN_PENDING_UNBOUNDED);
    return tx;
  }

  /**
   * Waits for the writes (calling `beat` meanwhile), then, in stage `writing`, swaps the rest and commits, for the
   * job's owner only; undefined when no file was written, and nothing begun: `replaceSnippets` swaps then.
   */
  async commit(crawl: Pick<CrawlResult, 'rules' | 'previousVersions'>, beat: () => void): Promise<WriteCounts | undefined> {
    const timer = setInterval(beat, SWAP_BEAT_MS);
    try {
      await this.clock.time('swap.wait', () => this.writes);
      if (this.failure) throw this.failure;
      const tx = this.tx;
      if (!tx) return undefined;
      await setStage(this.deps, this.input, { stage: 'writing', progress: 75, stageDetail: null });
      const { lib, version } = await loadScope(tx, this.input);
      const counts = await swapStaged(tx, this.input, lib, version, { before: this.written, written: this.paths, clock: this.clock });
      await storeConfig(tx, lib, version, crawl);
      if (!(await this.deps.jobs.ownedWithin(tx, this.input))) jobStopped();
      await this.end(() => tx.commit());
      const { timings: _, ...written } = counts;
      return written;
    } finally {
      clearInterval(timer);
    }
  }

  /** Commits or rolls back, once; the slot is free again when it is done. */
  private async end(how: () => Promise<void>): Promise<void> {
    this.ended = true;
    try {
      await how();
    } finally {
      this.slots.give();
    }
  }

  /** Rolls back what was not committed, once the writes have settled; the connection goes back to the pool. */
  async close(): Promise<void> {
    await this.writes;
    const tx = this.tx;
    if (!tx || this.ended) return;
    await this.end(() =>
      tx.rollback().catch((err: unknown) => this.deps.log.warn('could not roll back an index swap', { jobId: this.input.jobId, error: String(err) })),
    );
  }
}

/**
 * What a step that ends its job answers when this run has already recorded the job done: an attempt repeated after
 * the ending was written (Temporal never heard of the first one's result) has nothing left to do, and its stages'
 * writes, refused once the job is finished, would stop the run. Undefined while the job is not done by this run.
 */
export async function endedByThisRun(deps: ActivityDeps, input: IndexStep): Promise<{ totalSnippets: number } | undefined> {
  const em = deps.orm.em.fork();
  const job = await em.findOne(Job, { id: input.jobId });
  if (!job || job.runId !== input.runId || job.completedAt == null || job.status !== deps.jobs.kind(job).statuses.done) return undefined;
  const { lib, version } = await loadScope(em, input);
  return { totalSnippets: (version ?? lib).totalSnippets };
}

/** Snippets read at once, shortest first, then embedded in batches of a token budget (embeddings/batches.ts). */
const EMBED_PAGE = 256;

/**
 * Stage embed: embeds the scope's snippets that have no vector for the active profile yet (so unchanged files are
 * never embedded twice), in batches of similar length within a token budget (EMBED_BATCH_LIMITS); each batch is
 * written in its own statement, and a provider failure fails the job. Progress (snippets embedded of those to embed,
 * and the job's percentage from 80 to 95) is written after every batch, on the job and its event stream. Without an active provider there is nothing to do and search stays
 * keyword-only.
 */
export async function embedSnippets(deps: ActivityDeps, input: IndexStep, ctx: StepContext): Promise<{ embedded: number; provider: string | null }> {
  const em = deps.orm.em.fork();
  const provider = await activeEmbeddingProvider(em, deps.config);
  if (!provider) {
    await setStage(deps, input, { stage: 'embedding', progress: 80, stageDetail: 'no embedding provider active: keyword search only' });
    return { embedded: 0, provider: null };
  }
  const missing = `from snippet s where s.repository_id = ? and coalesce(s.version_id, '') = ?
         and not exists (select 1 from snippet_embedding e where e.snippet_id = s.id and e.profile_id = ?)`;
  const scope = [input.repositoryId, input.versionId ?? '', provider.profileId];
  const [{ n: total }] = (await em.execute(`select count(*)::int as n ${missing}`, scope)) as [{ n: number }];
  const detail = (done: number) => (total ? `${done} of ${total} snippets embedded with ${provider.model}` : `nothing to embed with ${provider.model}`);
  await setStage(deps, input, { stage: 'embedding', progress: 80, stageDetail: detail(0) }, { toEmbed: total, embedded: 0 });
  if (total && !(await prepareModel(deps, input, em, provider))) return { embedded: 0, provider: null };
  let embedded = 0;
  for (;;) {
    ctx.signal.throwIfAborted();
    // Shortest first: a model pads each batch to its longest text, so texts of one length cost the least.
    const page: { id: string; title: string | null; breadcrumb: string | null; content: string; token_count: number }[] = await em.execute(
      `select s.id, s.title, s.breadcrumb, s.content, s.token_count ${missing} order by s.token_count, length(s.content), s.id limit ?`,
      [...scope, EMBED_PAGE],
    );
    if (!page.length) break;
    for (const rows of tokenBatches(page, (r) => r.token_count, EMBED_BATCH_LIMITS)) {
      ctx.signal.throwIfAborted();
      embedded += await embedBatch(em, provider, input, rows, ctx.signal, deps.config.searchVectors === 'pgvector');
      ctx.heartbeat({ embedded });
      const done = Math.min(embedded, total);
      await setStage(deps, input, { progress: 80 + Math.floor((15 * done) / Math.max(total, 1)), stageDetail: detail(done) }, { embedded: done });
    }
  }
  if (deps.config.searchVectors === 'pgvector') {
    // Building a large scope's HNSW index takes minutes: the step says it is alive meanwhile.
    const beat = setInterval(() => ctx.heartbeat({ embedded }), HNSW_BEAT_MS);
    try {
      await indexInPostgres(em, input, provider.profileId);
    } finally {
      clearInterval(beat);
    }
  } else await packVectors(deps, input, provider.profileId);
  return { embedded, provider: provider.model };
}

/** How often the embed step heartbeats while PostgreSQL builds a scope's HNSW index. */
const HNSW_BEAT_MS = 5000;

/**
 * SEARCH_VECTORS=pgvector (docindex/search/pgvector.ts): the scope's rows written without their `vector` (by an
 * earlier attempt of a memory-mode worker, say) get it, and a scope too big for exact search gets its own HNSW
 * index. API processes load nothing, so there is no pack to write.
 */
async function indexInPostgres(em: EntityManager, input: IndexStep, profileId: string): Promise<void> {
  const scope = { repositoryId: input.repositoryId, versionId: input.versionId };
  await fillVectorColumn(em, scope);
  const { rows, dims } = await scopeVectors(em, scope, profileId);
  if (rows > EXACT_MAX_ROWS) await ensureScopeIndex(em, scope, profileId, dims);
}

/**
 * Packs the scope's vectors for the API's fast load (docindex/search/vector-pack.ts). Safe to repeat or race: a pack
 * records the rows it holds and is only read while they are the scope's. Without one, search reads the rows, so a
 * failure here is only logged.
 */
async function packVectors(deps: ActivityDeps, input: IndexStep, profileId: string): Promise<void> {
  const t0 = performance.now();
  try {
    const { written } = await writeVectorPack(deps.orm.em.fork(), { repositoryId: input.repositoryId, versionId: input.versionId }, profileId);
    deps.log.debug('vector pack', { repositoryId: input.repositoryId, versionId: input.versionId, written, ms: Math.round(performance.now() - t0) });
  } catch (err) {
    deps.log.warn('could not pack the vectors; search reads them row by row', { repositoryId: input.repositoryId, error: (err as Error).message });
  }
}

/** Embeds one batch of snippets as passages and stores their vectors in one statement; returns how many. */
async function embedBatch(
  em: EntityManager,
  provider: EmbeddingProvider,
  input: IndexStep,
  rows: { id: string; title: string | null; breadcrumb: string | null; content: string }[],
  signal: AbortSignal,
  inPostgres: boolean,
): Promise<number> {
  const vectors = await embedAs(provider, 'passage', rows.map((r) => [r.breadcrumb, r.title, r.content].filter(Boolean).join('\n')), signal);
  if (vectors.length !== rows.length) throw new PermanentError(`${provider.model} returned ${vectors.length} vectors for ${rows.length} texts`);
  const values = rows.map((r, i) => ({
    id: r.id,
    v: Buffer.from(vectors[i]!.buffer, vectors[i]!.byteOffset, vectors[i]!.byteLength).toString('base64'),
    ...(inPostgres && { x: vectorText(vectors[i]!) }),
  }));
  // With SEARCH_VECTORS=pgvector the row also gets its `vector` and scope version (docindex/search/pgvector.ts).
  await em.execute(
    `insert into snippet_embedding (snippet_id, profile_id, repository_id, model, dimensions, embedding, created_at${inPostgres ? ', embedding_vector, version_id' : ''})
     select id, ?, ?, ?, ?, decode(v, 'base64'), now()${inPostgres ? ', x::vector, ?' : ''} from json_to_recordset(?::json) as t(id text, v text, x text)
     on conflict do nothing`,
    [provider.profileId, input.repositoryId, provider.model, vectors[0]!.length, ...(inPostgres ? [input.versionId] : []), JSON.stringify(values)],
  );
  return rows.length;
}

/**
 * A local model is loaded first, and downloaded on first use: the job says how far the download has come. False
 * when the default profile's model is not available: that profile is disabled and search stays keyword-only.
 */
async function prepareModel(deps: ActivityDeps, input: IndexStep, em: EntityManager, provider: EmbeddingProvider): Promise<boolean> {
  if (!provider.prepare) return true;
  let shown = -1;
  let writes = Promise.resolve();
  const t0 = Date.now();
  try {
    await provider.prepare(({ loaded, total: size }) => {
      const pct = size ? Math.min(100, Math.floor((100 * loaded) / size)) : 0;
      if (shown < 0) deps.log.info(`downloading the embedding model ${provider.model} (first use)`, { into: deps.config.embeddings.cacheDir, from: deps.config.embeddings.modelHost });
      if (shown >= 0 && pct < shown + 5 && !(pct === 100 && shown < 100)) return;
      shown = pct;
      const stageDetail = `downloading the embedding model ${provider.model}: ${pct}% of ${(size / 1e6).toFixed(0)} MB`;
      writes = writes.then(() => setStage(deps, input, { stageDetail }));
    });
    await writes;
    if (shown >= 0) deps.log.info(`downloaded the embedding model ${provider.model}`, { seconds: Math.round((Date.now() - t0) / 1000) });
    return true;
  } catch (err) {
    await writes.catch(() => undefined);
    if (!(err instanceof ModelUnavailableError) || provider.profileId !== DEFAULT_PROFILE_ID) throw err;
    await disableUnavailableDefault(em, err.message, deps.log);
    await setStage(deps, input, { stageDetail: `the embedding model ${provider.model} is not available: keyword search only` });
    return false;
  }
}

/**
 * Stage statistics: snippet totals, trust score and timestamps. The trust score (0-10) rewards a library that is
 * substantial and documented: up to 4 points for size (log of the snippet count, full at 10,000), 2 for prose
 * documentation, 2 for code examples, 1 for having indexed versions, 1 for a config file with rules.
 * `searchChanged` false (a run that changed no snippet and no vector) leaves the search stamp. Written with the
 * job's stage, for its owner only; with `endsJob`, with the job's ending as well (a no-change re-index's last step,
 * docindex/workflow.ts): one transaction either way, the stage's progress event before the ending's.
 */
export async function updateStatistics(
  deps: ActivityDeps,
  input: IndexStep,
  crawl: CrawlResult,
  opts: { searchChanged?: boolean; endsJob?: boolean } = {},
): Promise<{ totalSnippets: number }> {
  let total = 0;
  const write = async (tx: EntityManager) => {
    total = await writeStatistics(tx, input, crawl, opts.searchChanged ?? true);
  };
  if (opts.endsJob) {
    const ending = { jobId: input.jobId, runId: input.runId, outcome: 'done' as const };
    const { changed } = await deps.jobs.finish(deps.orm.em, ending, { patch: { stage: 'statistics' }, leading: (job) => [progressEvent(job)], within: write });
    if (!changed) jobStopped();
  } else await asOwner(deps, input, () => ({ stage: 'statistics', progress: 95 }), { extra: (job) => [progressEvent(job)], within: write });
  return { totalSnippets: total };
}

/** The scope's statistics (updateStatistics), written in `tx`; returns its snippet total. */
async function writeStatistics(tx: EntityManager, input: IndexStep, crawl: CrawlResult, searchChanged: boolean): Promise<number> {
  const { lib, version } = await loadScope(tx, input);
  // Counted in one pass, not grouped: grouping sorted the scope's rows first (4 of 21 ms for 33,841 snippets).
  const [counts] = (await tx.execute(
    `select count(*) filter (where type = 'code')::int as code, count(*) filter (where type = 'info')::int as info
     from snippet where repository_id = ? and coalesce(version_id, '') = ?`,
    [lib.id, version?.id ?? ''],
  )) as [{ code: number; info: number }];
  const total = counts.code + counts.info;
  const now = new Date();
  // The search stamp moves only with what search reads: a run that changed nothing keeps every API's caches.
  const stamp = searchChanged || !(version ?? lib).searchStamp ? { searchStamp: now } : {};
  if (version) {
    await tx.nativeUpdate(LibraryVersion, { id: version.id }, { totalSnippets: total, indexedAt: now, commitHash: crawl.commit ?? version.commitHash, ...stamp });
  } else {
    const indexedVersions = await tx.count(LibraryVersion, { repositoryId: lib.id, state: 'indexed' });
    const trust =
      4 * Math.min(1, Math.log10(1 + total) / 4) + (counts.info > 0 ? 2 : 0) + (counts.code > 0 ? 2 : 0) + (indexedVersions > 0 ? 1 : 0) + (crawl.rules.length > 0 ? 1 : 0);
    await tx.nativeUpdate(
      Library,
      { id: lib.id },
      {
        totalSnippets: total, trustScore: Math.round(trust * 10) / 10, lastIndexedAt: now, lastCommit: crawl.commit, updatedAt: now, ...stamp,
        ...(crawl.packageVersion && { latestVersion: crawl.packageVersion }),
      },
    );
  }
  return total;
}
