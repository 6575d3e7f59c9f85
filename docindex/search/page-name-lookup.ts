import type { EntityManager } from '@mikro-orm/postgresql';
import { TEXT_ARRAY, textArray } from '../../db/sql.js';
import { isDeclarationFile, pageNameStems } from './page-names.js';

/** What a document's path says to the keyword ranking (evidence.ts): its page-name stems and whether it only declares types. */
export interface PageLookup {
  namesOf: (documentId: string) => readonly string[];
  isDeclaration: (documentId: string) => boolean;
}
interface PageFacts {
  names: string[];
  declaration: boolean;
}

/**
 * Each document's page-name stems and declaration flag (page-names.ts), read once per document for the keyword candidates' pages and kept
 * in this process: a document's path never changes (a re-indexed file whose path changes is another document), so
 * after the first queries of a library this costs no read.
 */
const CACHE_SIZE = 50_000;
const cache = new Map<string, PageFacts>();

export async function pageNames(em: EntityManager, documentIds: readonly string[]): Promise<PageLookup> {
  const missing = [...new Set(documentIds.filter((d) => !cache.has(d)))];
  if (missing.length) {
    const rows = (await em.execute(`select id, file_path from library_document where id = any(${TEXT_ARRAY})`, [textArray(missing)])) as { id: string; file_path: string }[];
    for (const r of rows) {
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(r.id, { names: pageNameStems(r.file_path), declaration: isDeclarationFile(r.file_path) });
    }
  }
  return { namesOf: (documentId) => cache.get(documentId)?.names ?? [], isDeclaration: (documentId) => cache.get(documentId)?.declaration ?? false };
}

/**
 * Semantic candidates carry their page's number in the matrix they were scanned from, not their document (vectors.ts),
 * so whether a page only declares types is read once per page and matrix, from one of its snippets: a page number
 * stands for one document as long as the matrix is cached, and after a library's first queries this costs no read.
 * Candidates with no matrix (SEARCH_VECTORS=pgvector numbers pages per query) are remembered by snippet instead.
 */
const matrixPages = new WeakMap<object, Map<number, boolean>>();
const SNIPPET_CACHE_SIZE = 200_000;
const snippetPages = new Map<string, boolean>();

export async function declarationPages<C extends { id: string; page: number }>(em: EntityManager, candidates: readonly C[], matrix?: object): Promise<(candidate: C) => boolean> {
  let pages = matrix && matrixPages.get(matrix);
  if (matrix && !pages) matrixPages.set(matrix, (pages = new Map()));
  const known = (c: C) => (pages ? pages.get(c.page) : snippetPages.get(c.id));
  // One snippet for each page (or snippet) not known yet.
  const missing = new Map<number | string, string>();
  for (const c of candidates) if (known(c) === undefined) missing.set(pages ? c.page : c.id, c.id);
  if (missing.size) {
    const rows = (await em.execute(`select s.id, d.file_path from snippet s join library_document d on d.id = s.document_id where s.id = any(${TEXT_ARRAY})`, [
      textArray([...new Set(missing.values())]),
    ])) as { id: string; file_path: string }[];
    const paths = new Map(rows.map((r) => [r.id, r.file_path]));
    for (const [key, snippetId] of missing) {
      const filePath = paths.get(snippetId);
      if (filePath === undefined) continue;
      if (pages) pages.set(key as number, isDeclarationFile(filePath));
      else {
        if (snippetPages.size >= SNIPPET_CACHE_SIZE) snippetPages.delete(snippetPages.keys().next().value!);
        snippetPages.set(key as string, isDeclarationFile(filePath));
      }
    }
  }
  return (c) => known(c) ?? false;
}
