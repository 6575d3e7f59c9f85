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
    for (const r of rows) remember(r);
  }
  return { namesOf: (documentId) => cache.get(documentId)?.names ?? [], isDeclaration: (documentId) => cache.get(documentId)?.declaration ?? false };
}

/** Pages of a scope read ahead at most: a bigger scope's are read as its queries find them, not flushing the others. */
const SCOPE_PAGES = 10_000;

/**
 * Reads the facts of every page of a scope into the cache at once. Called when the scope's keyword index is loaded
 * (search.ts), so a question whose candidates are on pages no query found before reads no path: one statement per
 * index load instead of one per such question.
 */
export async function rememberScopePages(em: EntityManager, scope: { repositoryId: string; versionId: string | null }): Promise<void> {
  const where = scope.versionId === null ? 'version_id is null' : 'version_id = ?';
  const rows = (await em.execute(`select id, file_path from library_document where repository_id = ? and ${where} limit ${SCOPE_PAGES + 1}`, [
    scope.repositoryId,
    ...(scope.versionId === null ? [] : [scope.versionId]),
  ])) as { id: string; file_path: string }[];
  if (rows.length > SCOPE_PAGES) return;
  for (const r of rows) remember(r);
}

function remember(r: { id: string; file_path: string }): void {
  if (cache.size >= CACHE_SIZE && !cache.has(r.id)) cache.delete(cache.keys().next().value!);
  cache.set(r.id, { names: pageNameStems(r.file_path), declaration: isDeclarationFile(r.file_path) });
}

/** A semantic candidate (vectors.ts `topK`, pgvector.ts): its page's number, and its document when the search read it. */
export interface PagedCandidate {
  id: string;
  page: number;
  documentId?: string;
}

/** What a matrix knows of its pages' documents (vectors.ts `Matrix.pageDocuments`). */
export interface PageDocuments {
  pageDocuments: (string | undefined)[];
}

/**
 * Whether each semantic candidate's page only declares types, from `pageNames`, so the flag has one cache. A matrix's
 * candidates carry a page number, not a document: a page's document is read once, from one of its snippets, and kept
 * by the matrix (its page numbers mean nothing elsewhere), so after a library's first queries this costs no read.
 */
export async function declarationPages<C extends PagedCandidate>(em: EntityManager, candidates: readonly C[], matrix?: PageDocuments): Promise<(candidate: C) => boolean> {
  const documentOf = (c: C) => c.documentId ?? matrix?.pageDocuments[c.page];
  const unknown = new Map<number, string>();
  if (matrix) for (const c of candidates) if (documentOf(c) === undefined) unknown.set(c.page, c.id);
  if (unknown.size) {
    const rows = (await em.execute(`select id, document_id from snippet where id = any(${TEXT_ARRAY})`, [textArray([...unknown.values()])])) as { id: string; document_id: string }[];
    const documents = new Map(rows.map((r) => [r.id, r.document_id]));
    for (const [page, snippetId] of unknown) matrix!.pageDocuments[page] ??= documents.get(snippetId);
  }
  const pages = await pageNames(em, candidates.flatMap((c) => documentOf(c) ?? []));
  return (c) => {
    const documentId = documentOf(c);
    return documentId !== undefined && pages.isDeclaration(documentId);
  };
}
