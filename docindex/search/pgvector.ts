import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConfigError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { Orm } from '../../db/orm.js';
import { execute, join, raw, sql, type Sql } from '../../db/sql.js';
import { inScope, type Scope } from './keyword.js';
import { normalise, type PagedRanked } from './vectors.js';

/**
 * Semantic search in PostgreSQL (SEARCH_VECTORS=pgvector), so API processes hold no matrices however many snippets
 * the index has. Each vector is kept twice: as float32 bytes in `snippet_embedding.embedding`, what every other
 * part reads (packs, the in-process search), and as a unit-length pgvector `vector` in `embedding_vector`, which
 * this file adds, fills and searches. Unit length makes the inner product (`<#>`, the cheapest operator) the cosine
 * the in-process search ranks by, so both stores give the same scores. The row's scope version (`version_id`, as
 * its snippet's) is added beside it, so a search reads `snippet_embedding` alone and joins its snippets only for
 * the rows it returns.
 *
 * A scope of at most EXACT_MAX_ROWS vectors is searched exactly (its rows through the (repository, profile) index,
 * every distance computed). A larger one goes through its own HNSW index (approximate), built by `ensureScopeIndex`
 * after an embed stage. Several scopes searched together (search across libraries) are one exact statement while
 * they hold at most EXACT_MAX_ROWS vectors between them; beyond that each large scope is searched through its index,
 * the small ones together exactly, and the lists merged.
 */
export const EXACT_MAX_ROWS = 20_000;
/**
 * The HNSW graph and search: links per node (`m`), candidates kept while building (`ef_construction`) and while
 * searching (`hnsw.ef_search`, at least the rows asked for). pgvector's defaults (16, 64, 40) found 0.77 of the true
 * best ten in a 170k-snippet library at ef_search 200; these find 0.98 in about 3.4 ms, for twice the build time
 * (bench/README.md, "Scale").
 */
const HNSW_M = 24;
const HNSW_EF_CONSTRUCTION = 128;
const EF_SEARCH = 400;
const LOCK = 'gristmill:pgvector-schema';
const MISSING_INDEX = 'snippet_embedding_vector_missing';

/** pgvector's text form of a vector, at unit length. */
export function vectorText(v: Float32Array): string {
  return `[${Array.from(normalise(v)).join(',')}]`;
}

/**
 * Readies the database for SEARCH_VECTORS=pgvector, in every process at start (safe to race): the extension, the
 * column, and the vectors of rows written before (by a memory-mode install, say). A server without pgvector stops
 * the start with what to do.
 */
export async function ensurePgvector(orm: Orm, log: Logger): Promise<void> {
  const em = orm.em.fork();
  // `present`: how many of the two columns and the index of rows to fill exist.
  const [row] = await em.execute<{ available: boolean; installed: boolean; present: number }[]>(
    `select exists (select 1 from pg_available_extensions where name = 'vector') as available,
            exists (select 1 from pg_extension where extname = 'vector') as installed,
            (select count(*)::int from information_schema.columns
              where table_name = 'snippet_embedding' and column_name in ('embedding_vector', 'version_id') and table_schema = current_schema())
            + (select count(*)::int from pg_indexes where tablename = 'snippet_embedding' and indexname = '${MISSING_INDEX}') as present`,
  );
  if (!row!.available) {
    throw new ConfigError(
      'SEARCH_VECTORS=pgvector, but this PostgreSQL server has no pgvector extension: run one that has it (the pgvector/pgvector image, or ' +
        "Debian's postgresql-<major>-pgvector package), or set SEARCH_VECTORS=memory",
    );
  }
  // ALTER TABLE locks the table against every query, even when it changes nothing: only when something is missing.
  if (row!.installed && row!.present === 3) return void (await fillAndSay(em, log));
  try {
    await em.transactional(async (tx) => {
      await tx.execute(`select pg_advisory_xact_lock(hashtext(?))`, [LOCK]);
      if (!row!.installed) await tx.execute(`create extension if not exists vector`);
      await tx.execute(`alter table snippet_embedding add column if not exists embedding_vector vector, add column if not exists version_id varchar(255)`);
      // The rows still to fill, found without reading the table at every start: empty once all are filled.
      await tx.execute(`create index if not exists "${MISSING_INDEX}" on snippet_embedding (snippet_id, profile_id) where embedding_vector is null`);
    });
  } catch (err) {
    if (/permission denied/i.test((err as Error).message)) {
      throw new ConfigError(`SEARCH_VECTORS=pgvector: this database user may not create the pgvector extension; have a superuser run "create extension vector" in the database once`);
    }
    throw err;
  }
  await fillAndSay(em, log);
}

async function fillAndSay(em: EntityManager, log: Logger): Promise<void> {
  const filled = await fillVectorColumn(em);
  if (filled) log.info('vectors copied into the pgvector column', { rows: filled });
}

/** Fills `embedding_vector` and `version_id` of the rows (of one scope, or all) that have no vector; returns how many. Idempotent. */
export async function fillVectorColumn(em: EntityManager, scope?: Scope, batch = 500): Promise<number> {
  const where = scope ? sql`and ${inScope(scope, 's')}` : raw('');
  let filled = 0;
  for (;;) {
    const rows = await execute<{ snippet_id: string; profile_id: string; version_id: string | null; v: string }[]>(
      em,
      sql`select e.snippet_id, e.profile_id, s.version_id, encode(e.embedding, 'base64') as v
       from snippet_embedding e join snippet s on s.id = e.snippet_id
       where e.embedding_vector is null ${where} order by e.snippet_id, e.profile_id limit ${batch}`,
    );
    if (!rows.length) return filled;
    const values = rows.map((r) => {
      const bytes = Buffer.from(r.v, 'base64');
      const v = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
      return { s: r.snippet_id, p: r.profile_id, ver: r.version_id, v: vectorText(v) };
    });
    await em.execute(
      `update snippet_embedding e set embedding_vector = t.v::vector, version_id = t.ver
       from json_to_recordset(?::json) as t(s text, p text, ver text, v text)
       where e.snippet_id = t.s and e.profile_id = t.p and e.embedding_vector is null`,
      [JSON.stringify(values)],
    );
    filled += rows.length;
  }
}

const INDEX_PREFIX = 'snippet_embedding_hnsw_';
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * The scope's own HNSW index (inner product over `vector(dims)`, partial on the profile and the scope), built the
 * first time the scope outgrows exact search; later rows are added to it as they are written. One index per large
 * scope rather than one per profile: a search of one scope through a profile-wide graph filters most of what it
 * visits away, and its recall falls (bench/README.md, "Scale"). Indexes of scopes no longer indexed are dropped here.
 */
export async function ensureScopeIndex(em: EntityManager, scope: Scope, profileId: string, dims: number): Promise<void> {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16_000) return;
  const key = `${profileId}\n${scope.repositoryId}\n${scope.versionId ?? ''}`;
  const name = `${INDEX_PREFIX}${createHash('sha256').update(key).digest('hex').slice(0, 16)}_${dims}`;
  const version = scope.versionId === null ? 'version_id is null' : `version_id = ${literal(scope.versionId)}`;
  await em.execute(
    `create index if not exists "${name}" on snippet_embedding using hnsw ((embedding_vector::vector(${dims})) vector_ip_ops)
     with (m = ${HNSW_M}, ef_construction = ${HNSW_EF_CONSTRUCTION}) where profile_id = ${literal(profileId)} and repository_id = ${literal(scope.repositoryId)} and ${version}`,
  );
  await dropOrphanIndexes(em);
}

/** Drops the scope indexes whose scope has no vectors left (its library deleted or re-embedded under another profile). */
async function dropOrphanIndexes(em: EntityManager): Promise<void> {
  const indexes = await em.execute<{ name: string; def: string }[]>(
    `select indexname as name, indexdef as def from pg_indexes where tablename = 'snippet_embedding' and indexname like ?`,
    [`${INDEX_PREFIX}%`],
  );
  for (const index of indexes) {
    const where = /\sWHERE\s(.*)$/s.exec(index.def)?.[1];
    if (!where) continue;
    const [row] = await em.execute<{ used: boolean }[]>(`select exists (select 1 from snippet_embedding where ${where}) as used`);
    if (!row!.used) await em.execute(`drop index if exists "${index.name}"`);
  }
}

/** How many vectors the scope has under the profile, and their length (0 when none). */
export interface ScopeVectors {
  rows: number;
  dims: number;
}

export async function scopeVectors(em: EntityManager, scope: Scope, profileId: string): Promise<ScopeVectors> {
  const [row] = await execute<{ n: number; dims: number | null }[]>(
    em,
    sql`select count(*)::int as n, max(vector_dims(e.embedding_vector)) as dims from snippet_embedding e
     where ${inScope(scope, 'e')} and e.profile_id = ${profileId} and e.embedding_vector is not null`,
  );
  return { rows: row!.n, dims: row!.dims ?? 0 };
}

/** A row found by `pgvectorTopK`: its page (document) numbered as the in-process search's are, and its library. */
export interface ScopedRanked extends PagedRanked {
  repositoryId: string;
  versionId: string | null;
}

/** A scope to search, with how many vectors it holds (`scopeVectors`). */
export interface SizedScope {
  scope: Scope;
  rows: number;
}

type Found = { id: string; repository_id: string; version_id: string | null; document_id: string; d: number };

/** The best rows of `best` (a statement over snippet_embedding `e`), with their snippets' documents. */
const withDocuments = (best: Sql) =>
  sql`select t.id, t.repository_id, s.version_id, s.document_id, t.d from (${best}) t join snippet s on s.id = t.id`;

/** Every distance computed: the scopes' rows through the (repository, profile) index. */
function exactTopK(em: EntityManager, scopes: readonly Scope[], profileId: string, q: string, limit: number): Promise<Found[]> {
  const inScopes = join(scopes.map((scope) => sql`(${inScope(scope, 'e')})`), ' or ');
  return execute(
    em,
    withDocuments(
      sql`select e.snippet_id as id, e.repository_id, (e.embedding_vector <#> ${q}::vector) as d from snippet_embedding e
       where e.profile_id = ${profileId} and (${inScopes}) and e.embedding_vector is not null
       order by d, e.snippet_id limit ${limit}`,
    ),
  );
}

/** Through the scope's own HNSW index (`ensureScopeIndex`): the statement's condition is the index's. */
function indexedTopK(em: EntityManager, scope: Scope, profileId: string, q: string, dims: number, limit: number, efSearch: number): Promise<Found[]> {
  const distance = sql`e.embedding_vector::vector(${raw(String(dims))}) <#> ${q}::vector(${raw(String(dims))})`;
  return em.transactional(async (tx) => {
    await tx.execute(`select set_config('hnsw.ef_search', ?, true)`, [String(Math.min(1000, Math.max(efSearch, limit)))]);
    return execute<Found[]>(
      tx,
      withDocuments(
        sql`select e.snippet_id as id, e.repository_id, (${distance}) as d from snippet_embedding e
         where e.profile_id = ${profileId} and ${inScope(scope, 'e')}
         order by ${distance} limit ${limit}`,
      ),
    );
  });
}

/**
 * The `limit` snippets of the scopes (one library, or several searched at once) most similar to `query` (cosine),
 * best first, ties by snippet id: one exact statement while they hold at most EXACT_MAX_ROWS vectors between them,
 * else each larger scope through its HNSW index and the rest in one exact statement, merged (`efSearch` overrides
 * EF_SEARCH: the scale benchmark's sweep).
 */
export async function pgvectorTopK(
  em: EntityManager,
  scopes: readonly SizedScope[],
  profileId: string,
  query: Float32Array,
  limit: number,
  o: { efSearch?: number } = {},
): Promise<ScopedRanked[]> {
  const q = vectorText(query);
  const total = scopes.reduce((sum, s) => sum + s.rows, 0);
  const large = total > EXACT_MAX_ROWS ? scopes.filter((s) => s.rows > EXACT_MAX_ROWS) : [];
  const small = scopes.filter((s) => !large.includes(s)).map((s) => s.scope);
  const lists = await Promise.all([
    ...large.map((s) => indexedTopK(em, s.scope, profileId, q, query.length, limit, o.efSearch ?? EF_SEARCH)),
    small.length ? exactTopK(em, small, profileId, q, limit) : Promise.resolve([]),
  ]);
  const found = lists
    .flat()
    .map((r) => ({ ...r, d: Number(r.d) }))
    .sort((a, b) => a.d - b.d || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit);
  const pages = new Map<string, number>();
  return found.map((r) => ({
    id: r.id,
    repositoryId: r.repository_id,
    versionId: r.version_id,
    score: -r.d,
    page: pages.get(r.document_id) ?? pages.set(r.document_id, pages.size).size - 1,
    documentId: r.document_id,
  }));
}
