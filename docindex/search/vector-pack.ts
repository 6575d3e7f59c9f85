import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scope } from './keyword.js';

/**
 * A scope's vectors under one profile, packed (docindex/entities/vector-pack.ts) so that loading them for semantic
 * search is a few large reads instead of one row per snippet. The embed stage writes the pack; `loadMatrix`
 * (vectors.ts) reads it when its fingerprint is the scope's current one, and otherwise reads the rows as before.
 *
 * The fingerprint is the count of the scope's vector rows under the profile and a sum of hashes of each row's
 * snippet id, dimensions and creation time. A snippet id is derived from its content and document (pipeline.ts
 * `snippetId`), and a vector row is only ever inserted or deleted (a re-index deletes a changed file's snippets with
 * their vectors, a remade profile deletes its vectors), so equal fingerprints mean the same rows with the same vectors:
 * a re-index, a profile change or an older run writing its pack late can only make a pack unusable, never stale.
 */

/**
 * Rows per chunk: 2,500 rows of 384 float32 are 3.8 MB. Measured with every chunk read at once: at 100k rows, 2,500 loaded faster
 * than 10,000 and 25,000, which were slower than reading the rows (bench/README.md, "Context").
 */
export const PACK_CHUNK_ROWS = 2_500;

/** What the pack holds, as `Matrix` takes it (vectors.ts). */
export interface PackedVectors {
  ids: string[];
  dims: number;
  pageOf: Int32Array;
  row(i: number): Float32Array;
}

/** The scope's vector rows under the profile, as `e` (snippet_embedding) joined with `s` (snippet). */
function scopeRows(scope: Scope, profileId: string): { from: string; params: unknown[] } {
  return {
    from: `snippet_embedding e join snippet s on s.id = e.snippet_id where e.repository_id = ? and e.profile_id = ? and coalesce(s.version_id, '') = ?`,
    params: [scope.repositoryId, profileId, scope.versionId ?? ''],
  };
}

/** The fingerprint of the rows of `t` (snippet_embedding columns), as an aggregate. */
const fingerprint = (t: string) =>
  `count(*)::text || ':' || coalesce(sum(hashtextextended(${t}.snippet_id || '|' || ${t}.dimensions || '|' || (extract(epoch from ${t}.created_at) * 1000000)::bigint, 0)), 0)::text`;

const packWhere = `repository_id = ? and coalesce(version_id, '') = ? and profile_id = ?`;
const packParams = (scope: Scope, profileId: string) => [scope.repositoryId, scope.versionId ?? '', profileId];

/** The fingerprint of the scope's vector rows under the profile as they are now. */
async function currentFingerprint(em: EntityManager, scope: Scope, profileId: string): Promise<string> {
  const { from, params } = scopeRows(scope, profileId);
  const [row] = (await em.execute(`select ${fingerprint('e')} as fingerprint from ${from}`, params)) as [{ fingerprint: string }];
  return row.fingerprint;
}

/** The stored pack's fingerprint when all of its chunks are there and agree, else undefined. */
async function storedPack(em: EntityManager, scope: Scope, profileId: string): Promise<{ fingerprint: string; chunks: number } | undefined> {
  const rows: { chunk: number; chunks: number; fingerprint: string }[] = await em.execute(
    `select chunk, chunks, fingerprint from vector_pack where ${packWhere} order by chunk`,
    packParams(scope, profileId),
  );
  const first = rows[0];
  if (!first || rows.length !== first.chunks || rows.some((r, i) => r.chunk !== i || r.chunks !== first.chunks || r.fingerprint !== first.fingerprint)) return undefined;
  return { fingerprint: first.fingerprint, chunks: first.chunks };
}

/**
 * Packs the scope's current vectors under the profile, replacing its earlier pack (nothing is written when the
 * stored pack is already the current one). One statement reads the rows, fingerprints them and writes the chunks, so
 * the pack is exactly the rows of one snapshot; concurrent writers of a scope take turns. Rows of another dimension
 * than most are left out, as `loadMatrix` does.
 */
export async function writeVectorPack(em: EntityManager, scope: Scope, profileId: string, chunkRows = PACK_CHUNK_ROWS): Promise<{ written: boolean }> {
  return em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`vector-pack:${scope.repositoryId}@${scope.versionId ?? ''}#${profileId}`]);
    const [stored, current] = [await storedPack(tx, scope, profileId), await currentFingerprint(tx, scope, profileId)];
    if (stored?.fingerprint === current) return { written: false };
    await tx.execute(`delete from vector_pack where ${packWhere}`, packParams(scope, profileId));
    const insert = packInsert(scope, profileId, chunkRows);
    await tx.execute(insert.sql, insert.params);
    return { written: true };
  });
}

/** The statement that writes the pack of the scope's current rows (exported for the benchmark's plan check). */
export function packInsert(scope: Scope, profileId: string, chunkRows: number): { sql: string; params: unknown[] } {
  const { from, params } = scopeRows(scope, profileId);
  return {
    // Window functions and one-row subqueries only: no join whose plan a stale row estimate could make quadratic.
    sql: `insert into vector_pack (id, repository_id, version_id, profile_id, chunk, chunks, dimensions, fingerprint, ids, pages, vectors, created_at)
       with r as materialized (select e.snippet_id, s.document_id, e.dimensions, e.embedding, e.created_at from ${from}),
       d as (select dimensions from r group by dimensions order by count(*) desc, dimensions desc limit 1),
       k as (select snippet_id, document_id, embedding, (row_number() over (order by snippet_id collate "C") - 1)::int as i
             from r where dimensions = (select dimensions from d) and length(embedding) = dimensions * 4),
       w as (select snippet_id, embedding, i, min(i) over (partition by document_id) as first from k),
       c as (select snippet_id, embedding, i, (dense_rank() over (order by first) - 1)::int as page, i / ?::int as chunk from w)
       select ? || chunk::text, ?, ?, ?, chunk, (select ((count(*) + ?::int - 1) / ?::int)::int from k), (select dimensions from d),
         (select ${fingerprint('r')} from r),
         string_agg(snippet_id, E'\\n' order by i), string_agg(int4send(page), ''::bytea order by i), string_agg(embedding, ''::bytea order by i), now()
       from c group by chunk`,
    params: [...params, chunkRows, `${scope.repositoryId}@${scope.versionId ?? ''}#${profileId}#`, scope.repositoryId, scope.versionId, profileId, chunkRows, chunkRows],
  };
}

/**
 * The scope's packed vectors under the profile, or undefined when there is no pack or it is not the scope's current
 * one. The chunks are read two at a time, each only while it still has the fingerprint that was checked.
 */
export async function readVectorPack(em: EntityManager, scope: Scope, profileId: string): Promise<PackedVectors | undefined> {
  const [stored, current] = await Promise.all([storedPack(em, scope, profileId), currentFingerprint(em, scope, profileId)]);
  if (!stored || stored.fingerprint !== current) return undefined;
  const chunks = await inTurns(stored.chunks, PACK_READ_PARALLEL, async (chunk) => {
      // As base64, not the driver's hex: a third fewer bytes to send and decode (bench/README.md, "Context").
      const rows: { dimensions: number; ids: string; pages: string; vectors: string }[] = await em.execute(
        `select dimensions, ids, encode(pages, 'base64') as pages, encode(vectors, 'base64') as vectors from vector_pack where ${packWhere} and chunk = ? and fingerprint = ?`,
        [...packParams(scope, profileId), chunk, stored.fingerprint],
      );
      const row = rows[0];
      return row && { dimensions: row.dimensions, ids: row.ids, pages: Buffer.from(row.pages, 'base64'), vectors: Buffer.from(row.vectors, 'base64') };
  });
  if (chunks.some((c) => !c || c.dimensions !== chunks[0]!.dimensions)) return undefined;
  const dims = chunks[0]!.dimensions;
  const ids: string[] = [];
  const pages: number[] = [];
  const starts: number[] = [];
  const floats: Float32Array[] = [];
  for (const c of chunks) {
    const chunkIds = c!.ids.split('\n');
    if (c!.pages.length !== chunkIds.length * 4 || c!.vectors.length !== chunkIds.length * dims * 4) return undefined;
    starts.push(ids.length);
    for (const id of chunkIds) ids.push(id);
    const view = new DataView(c!.pages.buffer, c!.pages.byteOffset, c!.pages.length);
    for (let i = 0; i < chunkIds.length; i++) pages.push(view.getInt32(i * 4)); // int4send: big-endian
    floats.push(aligned(c!.vectors));
  }
  return {
    ids,
    dims,
    pageOf: Int32Array.from(pages),
    row: (i) => {
      let c = starts.length - 1;
      while (starts[c]! > i) c--;
      const at = (i - starts[c]!) * dims;
      return floats[c]!.subarray(at, at + dims);
    },
  };
}

/**
 * Chunks read at once: two keep both cores busy (PostgreSQL encoding one while Node decodes another) and leave the
 * connection pool to the requests a warm-up runs beside.
 */
const PACK_READ_PARALLEL = 2;

/** `count` tasks, at most `parallel` at a time; results in task order. */
async function inTurns<T>(count: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

/** The bytes as float32 (copied when they do not start at a multiple of 4). */
function aligned(b: Buffer): Float32Array {
  if (b.byteOffset % 4 === 0) return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
  const copy = new Uint8Array(b.length);
  copy.set(b);
  return new Float32Array(copy.buffer);
}
