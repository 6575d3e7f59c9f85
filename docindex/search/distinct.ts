/**
 * The order an answer's results are read in (docs/ranking.md, "Distinct results"): a ranking gives a page's snippets
 * one by one, so the first results could all be one page's, or the same text twice, and crowd out the next page that
 * answers. Here, once the results are loaded:
 *
 * - a snippet with the same type and text as a better one (a file shipped twice, an example repeated in a README) is
 *   dropped: the answer would spend its budget on it again;
 * - a page's later snippets are placed as if ranked PAGE_STEP places lower for each better snippet of their page (a
 *   tie keeps the ranking's order), so the first results show more pages; a page's best snippet keeps its place
 *   among the other pages' best.
 *
 * Scores are the ranking's, given out again in the new order, so they stay descending (as the rerank stage does).
 */

/** Places a snippet counts as lower per better snippet of its page (docs/ranking.md has the figures for 1, 2, 4 and all). */
export const PAGE_STEP = 2;

interface Result {
  type: string;
  content: string;
  documentId: string;
  score: number;
}

export function distinctResults<T extends Result>(results: T[]): T[] {
  // Texts by type and length first: only results of one length are ever compared whole.
  const texts = new Map<string, string[]>();
  const kept = results.filter((r) => {
    const key = `${r.type}:${r.content.length}`;
    const same = texts.get(key);
    if (!same) texts.set(key, [r.content]);
    else if (same.includes(r.content)) return false;
    else same.push(r.content);
    return true;
  });
  const seen = new Map<string, number>();
  const placed = kept.map((r, i) => {
    const before = seen.get(r.documentId) ?? 0;
    seen.set(r.documentId, before + 1);
    return { r, place: i + PAGE_STEP * before, i };
  });
  placed.sort((a, b) => a.place - b.place || a.i - b.i);
  return placed.map(({ r }, i) => ({ ...r, score: kept[i]!.score }));
}
