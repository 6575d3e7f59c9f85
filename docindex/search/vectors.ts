import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ranked, Scope } from './keyword.js';
import { quantizeRow } from './quantize.js';
import { layoutBytes, mergeTop, rowViews, scanQuery, scanRange, type Layout, type ScanQuery, type Top } from './scan.js';
import type { ScanPool } from './scan-pool.js';
import { ScopeCache } from './scope-cache.js';
import { SharedCalls } from './shared-calls.js';
import { bindKernels, LANES_PER_STEP, type Kernels } from './simd.js';
import { readVectorPack } from './vector-pack.js';

/**
 * Semantic search: cosine similarity between the query's vector and every stored vector of one library scope
 * (default branch or one version) under the active profile. PostgreSQL here has no vector index (no pgvector in the
 * embedded server), so each API process keeps a scope's vectors in memory as one Float32Array matrix of unit-length
 * rows (remote providers' vectors are normalised on load) and scans it per query: first a copy in 8-bit values,
 * then the best candidates again in float32 (scan.ts), so answers are float32's at a quarter of the memory read.
 *
 * Entries are keyed by scope, profile, model and a stamp that changes whenever a re-index changes the scope's snippets
 * or vectors (the library's or version's `searchStamp`: search.ts `scopeStampOf`, `scopeMatrix`), so such a job makes
 * the next query load the new vectors; each API process loads them as soon as the job is done (warm.ts), from the
 * pack the embed stage wrote (vector-pack.ts). Memory is bounded: least recently used entries are evicted once the
 * matrices together exceed `SEARCH_VECTOR_CACHE_MB` (a 100k-snippet library at 384 dimensions takes about 200 MB).
 */

const MAX_PAGES = 65536;

/** A scope with more vectors than one matrix can hold: semantic search answers by keyword instead. */
export class MatrixTooLargeError extends Error {
  constructor(rows: number, dims: number) {
    super(`${rows} vectors of ${dims} dimensions exceed the 4 GiB one vector matrix can hold`);
  }
}

/** Matrices smaller than this many floats are scanned on the calling thread: a thread's round trip costs more. */
const THREAD_MIN_FLOATS = 1 << 20;

/**
 * Queries scanned together at most: queries that arrive while a scan runs wait for it and then share one pass over
 * the rows, so concurrent queries read the matrix once per batch rather than once each.
 */
const MAX_BATCH = 8;

let matrixIds = 0;

/**
 * One scope's vectors: unit-length rows, each padded with zeros to a multiple of 16 values, as float32 and as int8
 * in a shared WebAssembly memory (layout in scan.ts) that the scan threads read in place. A batch of queries' rows
 * are split between the threads; with no pool, or for a small matrix, the calling thread scans them all per query.
 */
export class Matrix {
  readonly id = ++matrixIds;
  readonly bytes: number;
  private readonly layout: Layout;
  private readonly memory: WebAssembly.Memory;
  /** The largest int8 scale of any row, for the error bound of the 8-bit pass (quantize.ts). */
  private readonly rowScale: number;
  private kernels: Kernels | undefined;
  /** Queries scanned by the threads, sharing passes (with a pool). */
  private readonly passes = new SharedCalls<ScanQuery, Top>((queries) => this.scanPass(queries), MAX_BATCH);

  /**
   * Each page's document id, as far as known: all of them when the rows were read, else learned a page at a time when
   * a search needs one (page-name-lookup.ts `declarationPages`).
   */
  readonly pageDocuments: (string | undefined)[] = [];

  /**
   * `rows(i)` is row i, of length `dims` (normalised here). `pageOf[i]` numbers row i's page (document), for evidence
   * per page (evidence.ts); without it every row is a page of its own.
   */
  constructor(
    readonly ids: string[],
    readonly dims: number,
    rows: (i: number) => Float32Array,
    private readonly pool?: ScanPool,
    readonly pageOf: Int32Array = Int32Array.from(ids, (_, i) => i),
  ) {
    const stride = Math.max(LANES_PER_STEP, Math.ceil(dims / LANES_PER_STEP) * LANES_PER_STEP);
    this.layout = { rows: ids.length, stride, slots: (pool?.size ?? 0) + 1, batch: pool ? MAX_BATCH : 1 };
    const pages = Math.ceil(layoutBytes(this.layout) / 65536);
    // WebAssembly memory addresses 4 GiB: about 2.1 million rows at 384 dimensions, 550,000 at 1,536 (float32 and int8).
    if (pages > MAX_PAGES) throw new MatrixTooLargeError(ids.length, dims);
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    const views = rowViews(this.memory, this.layout);
    let rowScale = 0;
    for (let i = 0; i < ids.length; i++) {
      const row = normalise(rows(i));
      views.floats.set(row, i * stride);
      views.scales[i] = quantizeRow(row, views.int8.subarray(i * stride, i * stride + dims));
      rowScale = Math.max(rowScale, views.scales[i]!);
    }
    this.rowScale = rowScale;
    // Each id string about 68 bytes; a page's document id, read with the rows or learned later, counted from the start.
    let pageCount = 0;
    for (let i = 0; i < pageOf.length; i++) pageCount = Math.max(pageCount, pageOf[i]! + 1);
    this.bytes = this.memory.buffer.byteLength + (ids.length + pageCount) * 68;
  }

  /** The `limit` rows most similar to `query` (cosine), best first; ties by row, which is snippet id order. */
  async top(query: Float32Array, limit: number): Promise<Top> {
    const q = scanQuery(normalise(query), limit, this.layout, this.rowScale);
    const n = this.ids.length;
    if (!this.pool || n * this.layout.stride < THREAD_MIN_FLOATS) {
      this.kernels ??= bindKernels(this.memory);
      return scanRange(this.memory, this.kernels, this.layout, this.layout.slots - 1, [q], 0, n)[0]!;
    }
    return this.passes.get(q);
  }

  /** One pass of the scan threads over the rows for a batch of queries, each thread scanning its share of the rows. */
  private async scanPass(queries: ScanQuery[]): Promise<Top[]> {
    const pool = this.pool!;
    const n = this.ids.length;
    const per = Math.ceil(n / pool.size);
    const parts = await Promise.all(
      Array.from({ length: pool.size }, (_, t) =>
        pool.scan(t, { matrix: this.id, memory: this.memory, layout: this.layout, queries, start: t * per, end: Math.min(n, (t + 1) * per) }),
      ),
    );
    return queries.map((q, i) => mergeTop(parts.map((tops) => tops[i]!), q.limit));
  }

  /** Called when the cache drops the matrix, so the threads let go of its memory too. */
  dispose(): void {
    this.pool?.forget(this.id);
  }
}

/** The process's matrices, by scope, profile and stamp (scope-cache.ts). */
export class VectorCache extends ScopeCache<Matrix> {}

/**
 * Reads a scope's vectors of one profile (rows of another dimension than most are skipped), in snippet id order: from
 * its pack when that is the scope's current one (vector-pack.ts), else row by row (`{ packed: false }` insists).
 */
export async function loadMatrix(em: EntityManager, scope: Scope, profileId: string, pool?: ScanPool, o: { packed?: boolean } = {}): Promise<Matrix> {
  const pack = o.packed === false ? undefined : await readVectorPack(em, scope, profileId);
  if (pack) return new Matrix(pack.ids, pack.dims, pack.row, pool, pack.pageOf);
  return loadRows(em, scope, profileId, pool);
}

async function loadRows(em: EntityManager, scope: Scope, profileId: string, pool?: ScanPool): Promise<Matrix> {
  const params: unknown[] = [scope.repositoryId, profileId];
  let versionSql = 's.version_id is null';
  if (scope.versionId !== null) {
    versionSql = 's.version_id = ?';
    params.push(scope.versionId);
  }
  const rows: { snippet_id: string; document_id: string; dimensions: number; embedding: Buffer }[] = await em.execute(
    `select e.snippet_id, s.document_id, e.dimensions, e.embedding from snippet_embedding e join snippet s on s.id = e.snippet_id
     where e.repository_id = ? and e.profile_id = ? and ${versionSql} order by e.snippet_id collate "C"`,
    params,
  );
  const dims = rows.length ? mostCommon(rows.map((r) => r.dimensions)) : 0;
  const kept = rows.filter((r) => r.dimensions === dims && r.embedding.length === dims * 4);
  const pageNumbers = new Map<string, number>();
  const pageOf = Int32Array.from(kept, (r) => pageNumbers.get(r.document_id) ?? pageNumbers.set(r.document_id, pageNumbers.size).size - 1);
  const matrix = new Matrix(
    kept.map((r) => r.snippet_id),
    dims,
    (i) => {
      const b = kept[i]!.embedding;
      return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + dims * 4));
    },
    pool,
    pageOf,
  );
  for (const documentId of pageNumbers.keys()) matrix.pageDocuments.push(documentId);
  return matrix;
}

function mostCommon(values: number[]): number {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]![0];
}

export function normalise(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum);
  if (norm === 0 || Math.abs(norm - 1) < 1e-6) return v;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

/** A row of a matrix found by a scan, with its page's number (and its document, when the search read it: pgvector.ts). */
export interface PagedRanked extends Ranked {
  page: number;
  documentId?: string;
}

/** The `limit` snippets most similar to `query` (cosine), best first; ties by snippet id. */
export async function topK(m: Matrix, query: Float32Array, limit: number): Promise<PagedRanked[]> {
  if (!m.ids.length || query.length !== m.dims) return [];
  const top = await m.top(query, limit);
  return Array.from(top.rows, (r, i) => ({ id: m.ids[r]!, score: top.scores[i]!, page: m.pageOf[r]! }));
}
