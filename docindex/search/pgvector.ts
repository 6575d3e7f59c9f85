import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConfigError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { Orm } from '../../db/orm.js';
import type { Scope } from './keyword.js';
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
 * every distance computed). A larger one goes through the profile's HNSW index (approximate: pgvector's iterative
 * scan walks on until enough of the scope's rows are found), built by `ensureProfileIndex` after an embed stage.
 */
export const EXACT_MAX_ROWS = 20_000;
/** Candidates an HNSW search keeps (pgvector's `hnsw.ef_search`): at least the rows asked for. */
const EF_SEARCH = 200;
const LOCK = 'gristmill:pgvector-schema';

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
  const [row] = await em.execute<{ available: boolean; installed: boolean }[]>(
    `select exists (select 1 from pg_available_extensions where name = 'vector') as available,
            exists (select 1 from pg_extension where extname = 'vector') as installed`,
  );
  if (!row!.available) {
    throw new ConfigError(
      'SEARCH_VECTORS=pgvector, but this PostgreSQL server has no pgvector extension: run one that has it (the pgvector/pgvector image, or ' +
        "Debian's postgresql-<major>-pgvector package), or set SEARCH_VECTORS=memory",
    );
  }
  try {
    await em.transactional(async (tx) => {
      await tx.execute(`select pg_advisory_xact_lock(hashtext(?))`, [LOCK]);
      if (!row!.installed) await tx.execute(`create extension if not exists vector`);
      await tx.execute(`alter table snippet_embedding add column if not exists embedding_vector vector, add column if not exists version_id varchar(255)`);
    });
  } catch (err) {
    if (/permission denied/i.test((err as Error).message)) {
      throw new ConfigError(`SEARCH_VECTORS=pgvector: this database user may not create the pgvector extension; have a superuser run "create extension vector" in the database once`);
    }
    throw err;
  }
  const filled = await fillVectorColumn(em);
  if (filled) log.info('vectors copied into the pgvector column', { rows: filled });
}

/** `version_id` of `alias` is the scope's: SQL and its parameters (a plain comparison, which the planner estimates). */
function versionIs(alias: string, scope: Scope): [string, unknown[]] {
  return scope.versionId === null ? [`${alias}.version_id is null`, []] : [`${alias}.version_id = ?`, [scope.versionId]];
}

/** Fills `embedding_vector` and `version_id` of the rows (of one scope, or all) that have no vector; returns how many. Idempotent. */
export async function fillVectorColumn(em: EntityManager, scope?: Scope, batch = 500): Promise<number> {
  const [version, versionParams] = scope ? versionIs('s', scope) : ['true', []];
  const where = scope ? `and e.repository_id = ? and ${version}` : '';
  const params = scope ? [scope.repositoryId, ...versionParams] : [];
  let filled = 0;
  for (;;) {
    const rows = await em.execute<{ snippet_id: string; profile_id: string; version_id: string | null; v: string }[]>(
      `select e.snippet_id, e.profile_id, s.version_id, encode(e.embedding, 'base64') as v
       from snippet_embedding e join snippet s on s.id = e.snippet_id
       where e.embedding_vector is null ${where} order by e.snippet_id, e.profile_id limit ?`,
      [...params, batch],
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

/** The name of a profile's HNSW index over vectors of `dims` dimensions. */
function indexName(profileId: string, dims: number): string {
  return `snippet_embedding_hnsw_${createHash('sha256').update(profileId).digest('hex').slice(0, 12)}_${dims}`;
}

/**
 * The profile's HNSW index (inner product over `vector(dims)`, partial on the profile: an index holds one length),
 * built the first time a scope of the profile's outgrows exact search; later rows are added to it as they are written.
 */
export async function ensureProfileIndex(em: EntityManager, profileId: string, dims: number): Promise<void> {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16_000) return;
  const literal = `'${profileId.replace(/'/g, "''")}'`;
  await em.execute(
    `create index if not exists "${indexName(profileId, dims)}" on snippet_embedding
     using hnsw ((embedding_vector::vector(${dims})) vector_ip_ops) where profile_id = ${literal}`,
  );
}

/** How many vectors the scope has under the profile, and their length (0 when none). */
export interface ScopeVectors {
  rows: number;
  dims: number;
}

export async function scopeVectors(em: EntityManager, scope: Scope, profileId: string): Promise<ScopeVectors> {
  const [version, versionParams] = versionIs('e', scope);
  const [row] = await em.execute<{ n: number; dims: number | null }[]>(
    `select count(*)::int as n, max(vector_dims(e.embedding_vector)) as dims from snippet_embedding e
     where e.repository_id = ? and e.profile_id = ? and ${version} and e.embedding_vector is not null`,
    [scope.repositoryId, profileId, ...versionParams],
  );
  return { rows: row!.n, dims: row!.dims ?? 0 };
}

/** `e`'s row is in one of the scopes: SQL and its parameters. */
function inScopes(scopes: readonly Scope[]): [string, unknown[]] {
  const parts = scopes.map((scope) => {
    const [version, params] = versionIs('e', scope);
    return [`(e.repository_id = ? and ${version})`, [scope.repositoryId, ...params]] as const;
  });
  return [parts.length === 1 ? parts[0]![0] : `(${parts.map((p) => p[0]).join(' or ')})`, parts.flatMap((p) => p[1])];
}

/** A row found by `pgvectorTopK`: its page (document) numbered as the in-process search's are, and its library. */
export interface ScopedRanked extends PagedRanked {
  repositoryId: string;
  versionId: string | null;
}

/**
 * The `limit` snippets of the scopes (one library, or several searched at once) most similar to `query` (cosine),
 * best first, ties by snippet id; `rows` is how many vectors the scopes hold (`scopeVectors`), which chooses exact
 * search or the HNSW index (`efSearch` overrides EF_SEARCH: the scale benchmark's sweep).
 */
export async function pgvectorTopK(
  em: EntityManager,
  scopes: Scope | readonly Scope[],
  profileId: string,
  query: Float32Array,
  limit: number,
  rows: number,
  o: { efSearch?: number } = {},
): Promise<ScopedRanked[]> {
  const dims = query.length;
  const q = vectorText(query);
  const [where, whereParams] = inScopes(Array.isArray(scopes) ? scopes : [scopes as Scope]);
  // The best rows from snippet_embedding alone, then their snippets' documents.
  const withDocuments = (best: string) =>
    `select t.id, t.repository_id, s.version_id, s.document_id, t.d from (${best}) t join snippet s on s.id = t.id order by t.d, t.id`;
  let found: { id: string; repository_id: string; version_id: string | null; document_id: string; d: number }[];
  if (rows <= EXACT_MAX_ROWS) {
    found = await em.execute(
      withDocuments(
        `select e.snippet_id as id, e.repository_id, (e.embedding_vector <#> ?::vector) as d from snippet_embedding e
         where e.profile_id = ? and ${where} and e.embedding_vector is not null
         order by d, e.snippet_id limit ?`,
      ),
      [q, profileId, ...whereParams, limit],
    );
  } else {
    found = await em.transactional(async (tx) => {
      await tx.execute(`set local hnsw.iterative_scan = relaxed_order`);
      await tx.execute(`select set_config('hnsw.ef_search', ?, true)`, [String(Math.max(o.efSearch ?? EF_SEARCH, limit))]);
      return tx.execute(
        withDocuments(
          `select e.snippet_id as id, e.repository_id, (e.embedding_vector::vector(${dims}) <#> ?::vector(${dims})) as d from snippet_embedding e
           where e.profile_id = ? and ${where}
           order by e.embedding_vector::vector(${dims}) <#> ?::vector(${dims}) limit ?`,
        ),
        [q, profileId, ...whereParams, q, limit],
      );
    });
  }
  const pages = new Map<string, number>();
  return found.map((r) => ({
    id: r.id,
    repositoryId: r.repository_id,
    versionId: r.version_id,
    score: -Number(r.d),
    page: pages.get(r.document_id) ?? pages.set(r.document_id, pages.size).size - 1,
  }));
}
