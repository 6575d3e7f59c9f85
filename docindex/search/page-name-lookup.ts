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
