import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ranked, Scope } from './keyword.js';
import { dotsKernel, LANES_PER_STEP, type Dots } from './simd.js';

/**
 * Semantic search: cosine similarity between the query's vector and every stored vector of one library scope
 * (default branch or one version) under the active profile. PostgreSQL here has no vector index (no pgvector in the
 * embedded server), so each API process keeps a scope's vectors in memory as one Float32Array matrix of unit-length
 * rows (remote providers' vectors are normalised on load) and scans it per query.
 *
 * Entries are keyed by scope, profile and a stamp that changes whenever the scope is re-indexed (the library's
 * `lastIndexedAt` or the version's `indexedAt`, and the profile's `updatedAt`), so a finished indexing job makes the
 * next query load the new vectors. Memory is bounded: least recently used entries are evicted once the matrices
 * together exceed `SEARCH_VECTOR_CACHE_MB` (a 100k-snippet library at 384 dimensions takes about 150 MB).
 */

/**
 * One scope's vectors: unit-length rows, each padded with zeros to a multiple of 8 floats, in a WebAssembly memory
 * laid out as [query | scores | rows] so the SIMD kernel (simd.ts) scores every row in one call.
 */
export class Matrix {
  readonly bytes: number;
  private readonly stride: number;
  private readonly memory: WebAssembly.Memory;
  private readonly dots: Dots;
  private readonly query: Float32Array;
  private readonly scores: Float32Array;
  private readonly rowsOffset: number;

  /** `rows(i)` is row i, of length `dims` (normalised here). */
  constructor(
    readonly ids: string[],
    readonly dims: number,
    rows: (i: number) => Float32Array,
  ) {
    this.stride = Math.max(LANES_PER_STEP, Math.ceil(dims / LANES_PER_STEP) * LANES_PER_STEP);
    const n = ids.length;
    const floats = this.stride + n + n * this.stride;
    this.memory = new WebAssembly.Memory({ initial: Math.ceil((floats * 4) / 65536) });
    this.dots = dotsKernel(this.memory);
    this.query = new Float32Array(this.memory.buffer, 0, this.stride);
    this.scores = new Float32Array(this.memory.buffer, this.stride * 4, n);
    this.rowsOffset = (this.stride + n) * 4;
    const data = new Float32Array(this.memory.buffer, this.rowsOffset, n * this.stride);
    for (let i = 0; i < n; i++) data.set(normalise(rows(i)), i * this.stride);
    this.bytes = this.memory.buffer.byteLength + n * 64;
  }

  /** Cosine similarity of every row with `query` (unit length, `dims` long); valid until the next call. */
  score(query: Float32Array): Float32Array {
    this.query.set(query);
    this.dots(0, this.rowsOffset, this.ids.length, this.stride * 4, this.stride * 4);
    return this.scores;
  }
}

export class VectorCache {
  private readonly entries = new Map<string, Matrix>();
  private readonly loading = new Map<string, Promise<Matrix>>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  async get(key: string, load: () => Promise<Matrix>): Promise<Matrix> {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key); // re-insert: Map order is the recency order
      this.entries.set(key, hit);
      return hit;
    }
    let pending = this.loading.get(key);
    if (!pending) {
      pending = load().finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
      const m = await pending;
      // Older stamps of the same scope are dead weight.
      const scope = key.slice(0, key.lastIndexOf('|'));
      for (const [k, e] of this.entries) {
        if (k.slice(0, k.lastIndexOf('|')) === scope) this.drop(k, e);
      }
      if (m.bytes <= this.maxBytes) {
        this.entries.set(key, m);
        this.bytes += m.bytes;
        for (const [k, e] of this.entries) {
          if (this.bytes <= this.maxBytes) break;
          this.drop(k, e);
        }
      }
      return m;
    }
    return pending;
  }

  private drop(key: string, e: Matrix): void {
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

/** Reads a scope's vectors of one profile (rows of another dimension than most are skipped), in snippet id order. */
export async function loadMatrix(em: EntityManager, scope: Scope, profileId: string): Promise<Matrix> {
  const params: unknown[] = [scope.repositoryId, profileId];
  let versionSql = 's.version_id is null';
  if (scope.versionId !== null) {
    versionSql = 's.version_id = ?';
    params.push(scope.versionId);
  }
  const rows: { snippet_id: string; dimensions: number; embedding: Buffer }[] = await em.execute(
    `select e.snippet_id, e.dimensions, e.embedding from snippet_embedding e join snippet s on s.id = e.snippet_id
     where e.repository_id = ? and e.profile_id = ? and ${versionSql} order by e.snippet_id collate "C"`,
    params,
  );
  const dims = rows.length ? mostCommon(rows.map((r) => r.dimensions)) : 0;
  const kept = rows.filter((r) => r.dimensions === dims && r.embedding.length === dims * 4);
  return new Matrix(
    kept.map((r) => r.snippet_id),
    dims,
    (i) => {
      const b = kept[i]!.embedding;
      return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + dims * 4));
    },
  );
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

/** The `limit` rows most similar to `query` (cosine); ties by snippet id (rows are in id order). */
export function topK(m: Matrix, query: Float32Array, limit: number): Ranked[] {
  if (!m.ids.length || query.length !== m.dims) return [];
  const scores = m.score(normalise(query));
  // A small sorted buffer of the best `limit` (score desc, row asc): cheap since limit << rows.
  const bestRow: number[] = [];
  const bestScore: number[] = [];
  let floor = -Infinity;
  for (let r = 0; r < scores.length; r++) {
    const s = scores[r]!;
    if (bestRow.length >= limit && s <= floor) continue;
    let pos = bestRow.length;
    while (pos > 0 && bestScore[pos - 1]! < s) pos--;
    bestRow.splice(pos, 0, r);
    bestScore.splice(pos, 0, s);
    if (bestRow.length > limit) {
      bestRow.pop();
      bestScore.pop();
    }
    if (bestRow.length >= limit) floor = bestScore[bestScore.length - 1]!;
  }
  return bestRow.map((r, i) => ({ id: m.ids[r]!, score: bestScore[i]! }));
}
