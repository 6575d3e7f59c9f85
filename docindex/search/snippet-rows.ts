import type { EntityManager } from '@mikro-orm/postgresql';
import { TEXT_ARRAY, textArray } from '../../db/sql.js';
import type { Ranked } from './keyword.js';

/** A snippet as an answer shows it (docindex/search/context.ts). */
export interface SnippetRow {
  id: string;
  type: 'code' | 'info';
  title: string | null;
  content: string;
  language: string | null;
  breadcrumb: string | null;
  tokenCount: number;
  versionId: string | null;
  filePath: string;
  documentId: string;
  ordinal: number;
}

/** What a kept row is counted as: its strings at two bytes a character, its key, and the objects around them. */
const ROW_OVERHEAD = 240;
const rowBytes = (r: SnippetRow, key: string) =>
  ROW_OVERHEAD + 2 * (key.length + r.id.length + r.content.length + (r.title?.length ?? 0) + (r.breadcrumb?.length ?? 0) + (r.language?.length ?? 0) + (r.versionId?.length ?? 0) + r.filePath.length + r.documentId.length);

/**
 * The rows of snippets answers have shown lately, kept in this process up to `maxBytes` (SEARCH_SNIPPET_CACHE_MB),
 * the least recently shown dropped first: assistants ask a library's common questions again and again, and reading
 * the same fifty rows back from PostgreSQL was most of an answer's database time (bench/README.md, "Context").
 *
 * A row is kept under its id and its scope's stamp (search.ts, `scopeStamp`), which changes whenever the scope is
 * re-indexed: a snippet's id already names its library, version, file, place and text (docindex/pipeline.ts,
 * `snippetId`), and the stamp covers what a re-index may change beside them (its title, its breadcrumb). Rows of an
 * older stamp are never asked for again and leave with the least recently used.
 */
export class SnippetRows {
  private readonly rows = new Map<string, { row: SnippetRow; bytes: number }>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  get bytes(): number {
    return this.total;
  }

  get(id: string, stamp: string): SnippetRow | undefined {
    const key = `${id}|${stamp}`;
    const hit = this.rows.get(key);
    if (!hit) return undefined;
    this.rows.delete(key); // re-insert: Map order is the recency order
    this.rows.set(key, hit);
    return hit.row;
  }

  set(row: SnippetRow, stamp: string): void {
    const key = `${row.id}|${stamp}`;
    const bytes = rowBytes(row, key);
    if (bytes > this.maxBytes) return;
    const old = this.rows.get(key);
    if (old) {
      this.rows.delete(key);
      this.total -= old.bytes;
    }
    this.rows.set(key, { row, bytes });
    this.total += bytes;
    for (const [k, e] of this.rows) {
      if (this.total <= this.maxBytes) break;
      this.rows.delete(k);
      this.total -= e.bytes;
    }
  }

  clear(): void {
    this.rows.clear();
    this.total = 0;
  }
}

/** Where `loadSnippets` keeps rows: the cache, and the stamp of each ranked id's scope (undefined: not kept). */
export interface KeptRows {
  rows: SnippetRows;
  stampOf: (id: string) => string | undefined;
}

/**
 * The snippets of ranked ids, in rank order (ids deleted meanwhile are skipped): those `kept` holds from there, the
 * others read in one statement and kept.
 */
export async function loadSnippets(em: EntityManager, ranked: Ranked[], kept?: KeptRows): Promise<(SnippetRow & { score: number })[]> {
  const found = new Map<string, SnippetRow>();
  const stamps = new Map(kept ? ranked.map((r) => [r.id, kept.stampOf(r.id)]) : []);
  for (const r of ranked) {
    const stamp = stamps.get(r.id);
    const row = stamp === undefined ? undefined : kept!.rows.get(r.id, stamp);
    if (row) found.set(r.id, row);
  }
  const missing = ranked.filter((r) => !found.has(r.id));
  if (missing.length) {
    const rows: { id: string; type: 'code' | 'info'; title: string | null; content: string; language: string | null; breadcrumb: string | null; token_count: number; version_id: string | null; file_path: string; document_id: string; ordinal: number }[] =
      await em.execute(
        `select s.id, s.type, s.title, s.content, s.language, s.breadcrumb, s.token_count, s.version_id, s.ordinal, s.document_id, d.file_path
         from snippet s join library_document d on d.id = s.document_id where s.id = any(${TEXT_ARRAY})`,
        [textArray(missing.map((r) => r.id))],
      );
    for (const r of rows) {
      const row: SnippetRow = {
        id: r.id,
        type: r.type,
        title: r.title,
        content: r.content,
        language: r.language,
        breadcrumb: r.breadcrumb,
        tokenCount: r.token_count,
        versionId: r.version_id,
        filePath: r.file_path,
        documentId: r.document_id,
        ordinal: r.ordinal,
      };
      found.set(r.id, row);
      const stamp = stamps.get(r.id);
      if (stamp !== undefined) kept!.rows.set(row, stamp);
    }
  }
  return ranked.flatMap((r) => {
    const row = found.get(r.id);
    return row ? [{ ...row, score: r.score }] : [];
  });
}
