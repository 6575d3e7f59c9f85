/**
 * Evidence summed per page (docs/ranking.md, "Evidence per page"): a page that answers a question often does so in
 * several short snippets, each holding some of the question's words, and lost to one long snippet elsewhere that held
 * them all once. Each keyword candidate is credited with what its page's other candidates add: for each query term,
 * how much more the best snippet of the page scores for it than this one does, times PAGE_WEIGHT. A term the snippet
 * already matches best adds nothing, so a long page repeating a common word gains no more than a short one.
 */

/** A keyword candidate: its document (page or file), its score for each query term, and their sum. */
export interface Candidate {
  id: string;
  documentId: string;
  terms: number[];
  score: number;
}

/** The share of its page's evidence a snippet is credited with: 0.15 to 0.25 gave the same figures on the tuning corpus. */
export const PAGE_WEIGHT = 0.2;
/** How many of the best keyword candidates are weighed together. */
export const EVIDENCE_POOL = 100;

/** The best `limit` candidates by score plus page evidence. Ties: snippet id. */
export function withPageEvidence(candidates: Candidate[], limit: number): { id: string; score: number }[] {
  const best = new Map<string, number[]>();
  for (const c of candidates) {
    const page = best.get(c.documentId);
    if (!page) best.set(c.documentId, [...c.terms]);
    else c.terms.forEach((v, t) => (page[t] = Math.max(page[t] ?? 0, v)));
  }
  return candidates
    .map((c) => {
      const page = best.get(c.documentId)!;
      const added = c.terms.reduce((sum, v, t) => sum + (page[t]! - v), 0);
      return { id: c.id, score: c.score + PAGE_WEIGHT * added };
    })
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit);
}
