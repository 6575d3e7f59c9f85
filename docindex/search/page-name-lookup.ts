import type { EntityManager } from '@mikro-orm/postgresql';
import { TEXT_ARRAY, textArray } from '../../db/sql.js';
import { pageNameStems } from './page-names.js';

/**
 * Each document's page-name stems (page-names.ts), read once per document for the keyword candidates' pages and kept
 * in this process: a document's path never changes (a re-indexed file whose path changes is another document), so
 * after the first queries of a library this costs no read.
 */
const CACHE_SIZE = 50_000;
const cache = new Map<string, string[]>();

export async function pageNames(em: EntityManager, documentIds: readonly string[]): Promise<(documentId: string) => string[]> {
  const missing = [...new Set(documentIds.filter((d) => !cache.has(d)))];
  if (missing.length) {
    const rows = (await em.execute(`select id, file_path from library_document where id = any(${TEXT_ARRAY})`, [textArray(missing)])) as { id: string; file_path: string }[];
    for (const r of rows) {
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(r.id, pageNameStems(r.file_path));
    }
  }
  return (documentId) => cache.get(documentId) ?? [];
}
