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

/** What a kept entry is counted as: its strings at two bytes a character, its key, and the objects around them. */
const ENTRY_OVERHEAD = 240;
const rowBytes = (r: SnippetRow, key: string) =>
  ENTRY_OVERHEAD + 2 * (key.length + r.id.length + r.content.length + (r.title?.length ?? 0) + (r.breadcrumb?.length ?? 0) + (r.language?.length ?? 0) + (r.versionId?.length ?? 0) + r.filePath.length + r.documentId.length);
const idsBytes = (ids: readonly string[], key: string) => ENTRY_OVERHEAD + 2 * key.length + ids.reduce((sum, id) => sum + 16 + 2 * id.length, 0);

/**
 * The rows of snippets answers have shown lately, kept in this process up to `maxBytes` (SEARCH_SNIPPET_CACHE_MB),
 * the least recently shown dropped first: assistants ask a library's common questions again and again, and reading
 * the same fifty rows back from PostgreSQL was most of an answer's database time (bench/README.md, "Context"). With
 * them, the snippets around each result that text answers widen it with (neighbourhood.ts): which ids they are, their
 * rows kept as the others.
 *
 * A row is kept under its id and its scope's stamp (search.ts, `scopeStampOf`), which changes whenever a re-index
 * changes the scope: a snippet's id already names its library, version, file, place and text (docindex/pipeline.ts,
 * `snippetId`), and the stamp covers what a re-index may change beside them (its title, its breadcrumb, its
 * neighbours). Entries of an older stamp are never asked for again and leave with the least recently used.
 */
export class SnippetRows {
  private readonly entries = new Map<string, { value: SnippetRow | readonly string[]; bytes: number }>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  get bytes(): number {
    return this.total;
  }

  get(id: string, stamp: string): SnippetRow | undefined {
    return this.take(`r|${id}|${stamp}`) as SnippetRow | undefined;
  }

  set(row: SnippetRow, stamp: string): void {
    const key = `r|${row.id}|${stamp}`;
    this.put(key, row, rowBytes(row, key));
  }

  /** The ids of the snippets around snippet `id` in its file (neighbourhood.ts, `REACH`), in file order. */
  neighbours(id: string, stamp: string): readonly string[] | undefined {
    return this.take(`n|${id}|${stamp}`) as readonly string[] | undefined;
  }

  setNeighbours(id: string, stamp: string, ids: readonly string[]): void {
    const key = `n|${id}|${stamp}`;
    this.put(key, ids, idsBytes(ids, key));
  }

  private take(key: string): SnippetRow | readonly string[] | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key); // re-insert: Map order is the recency order
    this.entries.set(key, hit);
    return hit.value;
  }

  private put(key: string, value: SnippetRow | readonly string[], bytes: number): void {
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.total -= old.bytes;
    }
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(k);
      this.total -= e.bytes;
    }
  }

  clear(): void {
    this.entries.clear();
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
