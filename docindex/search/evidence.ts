/**
 * Evidence summed per page (docs/ranking.md, "Evidence per page"): a page that answers a question often does so in
 * several short snippets, each holding some of it, and lost to one long snippet elsewhere that held it all once. So
 * a snippet is credited with what its page's other candidates show, in each list:
 *
 * - keyword: for each query term, how much more the best snippet of the page scores for it than this one does,
 *   times KEYWORD_PAGE_WEIGHT. A term the snippet already matches best adds nothing, so a long page repeating a
 *   common word gains no more than a short one;
 * - keyword, by name: a documentation page whose file is named for a query term (`WebSocket.md` for "WebSocket
 *   client") is credited with PAGE_NAME_WEIGHT times its best score for that term, in each of its snippets;
 * - keyword, declaration files: a snippet of a file that only declares types (`.d.ts`, `.pyi`) scores DECLARATION_PRIOR
 *   times as much, since it holds the API's names without what they do;
 * - semantic: the similarity of the page's next most similar snippet, times SEMANTIC_PAGE_WEIGHT; and a declaration
 *   file's candidate scores DECLARATION_PRIOR times as much there too: its signatures sit near many questions' meaning.
 *
 * The best EVIDENCE_POOL candidates of a list are weighed together.
 */
import { stems, stemsNamePage } from './page-names.js';

/** A keyword candidate: its document (page or file), its score for each query term, and their sum. */
export interface Candidate {
  id: string;
  documentId: string;
  terms: number[];
  score: number;
}

/** The share of its page's evidence a snippet is credited with (0.15 to 0.25 gave the same figures on the tuning corpus). */
export const KEYWORD_PAGE_WEIGHT = 0.2;
/** The same for similarity (0.3 to 0.6 gave the same hybrid figures on the tuning corpus with all-MiniLM-L6-v2). */
export const SEMANTIC_PAGE_WEIGHT = 0.4;
/**
 * The share of a page's best score for a term that names the page (page-names.ts) each snippet of it is credited with
 * (0.25 to 1 gave the same figures on the tuning corpus).
 */
export const PAGE_NAME_WEIGHT = 0.5;
/**
 * What a candidate of a declaration file scores, as a share: keyword (chosen on the two tuning corpora: 0.5 and 0.7 gave
 * the same figures, 0.85 less) and semantic (0.5 and 0.7 the same, 0.85 less on attrs; docs/ranking.md).
 */
export const DECLARATION_PRIOR = 0.7;
/** How many of the best candidates of a list are weighed together. */
export const EVIDENCE_POOL = 100;

/**
 * The query's terms (in the order of a candidate's `terms`), each page's name stems and whether it only declares types
 * (page-names.ts).
 */
export interface PageNaming {
  terms: readonly string[];
  namesOf: (documentId: string) => readonly string[];
  isDeclaration?: (documentId: string) => boolean;
}

/**
 * The best `limit` keyword candidates by score plus page evidence, and, with `naming`, plus PAGE_NAME_WEIGHT times
 * the page's best score for each term that names the page, times DECLARATION_PRIOR for a declaration file. Ties: snippet id.
 */
export function withPageEvidence(candidates: Candidate[], limit: number, naming?: PageNaming): { id: string; score: number }[] {
  const best = new Map<string, number[]>();
  for (const c of candidates) {
    const page = best.get(c.documentId);
    if (!page) best.set(c.documentId, [...c.terms]);
    else c.terms.forEach((v, t) => (page[t] = Math.max(page[t] ?? 0, v)));
  }
  const named = new Map<string, number>();
  if (naming) {
    // A term's stems once per query, not once per page (a hundred pages at most).
    const stemsOf = naming.terms.map(stems);
    for (const [documentId, page] of best) {
      const names = naming.namesOf(documentId);
      if (names.length) named.set(documentId, page.reduce((sum, v, t) => sum + (stemsNamePage(stemsOf[t] ?? [], names) ? v : 0), 0));
    }
  }
  return candidates
    .map((c) => {
      const page = best.get(c.documentId)!;
      const added = c.terms.reduce((sum, v, t) => sum + (page[t]! - v), 0);
      const score = c.score + KEYWORD_PAGE_WEIGHT * added + PAGE_NAME_WEIGHT * (named.get(c.documentId) ?? 0);
      return { id: c.id, score: naming?.isDeclaration?.(c.documentId) ? DECLARATION_PRIOR * score : score };
    })
    .sort(byScore)
    .slice(0, limit);
}

/**
 * The best `limit` semantic candidates by similarity plus their page's next best similarity, times DECLARATION_PRIOR for
 * a candidate of a declaration file when `isDeclaration` says which (page-name-lookup.ts). Ties: snippet id.
 */
export function withSiblingSimilarity<C extends { id: string; score: number; page: number }>(
  candidates: C[],
  limit: number,
  isDeclaration?: (candidate: C) => boolean,
): { id: string; score: number }[] {
  const best = new Map<number, [number, number]>();
  for (const c of candidates) {
    const [first, second] = best.get(c.page) ?? [-Infinity, -Infinity];
    best.set(c.page, c.score > first ? [c.score, first] : [first, Math.max(second, c.score)]);
  }
  return candidates
    .map((c) => {
      const [first, second] = best.get(c.page)!;
      const sibling = c.score === first ? second : first;
      const score = c.score + SEMANTIC_PAGE_WEIGHT * Math.max(0, sibling);
      // A negative score is made no better by the prior: it only lowers.
      return { id: c.id, score: isDeclaration?.(c) ? Math.min(score, DECLARATION_PRIOR * score) : score };
    })
    .sort(byScore)
    .slice(0, limit);
}

const byScore = (a: { id: string; score: number }, b: { id: string; score: number }) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
