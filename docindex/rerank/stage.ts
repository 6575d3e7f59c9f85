import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/log.js';
import { TEXT_ARRAY, textArray } from '../../db/sql.js';
import type { Ranked } from '../search/keyword.js';
import { activeReranker } from './providers.js';
import { RerankError } from './remote.js';

/**
 * The optional reranking stage (docs/ranking.md, "Reranking"): after search, its first candidates are scored by the
 * active rerank profile (a local cross-encoder or a rerank server; none active: RERANK_URL, if set) and reordered by
 * those scores; the rest keep their place after them. A failure of any kind keeps the search's order and logs a
 * warning, so a query never fails for it.
 */

export interface RerankDeps {
  config: Config;
  log: Logger;
}

/** The texts the server reads, by snippet id. */
type SnippetTexts = (ids: string[]) => Promise<Map<string, string>>;

/** As fusion's k (docindex/search/search.ts): blending ranks, the first few places weigh most. */
const BLEND_K = 10;

/**
 * `head` in the server's order (`weight` 1) or blended with its own (reciprocal ranks, `weight` on the server's).
 * Ties keep the search's order. Scores stay the search's own, in descending order, so they remain comparable with
 * the results after the candidates.
 */
export function reorder(head: Ranked[], scores: number[], weight: number): Ranked[] {
  const positions = head.map((_, i) => i);
  const serverRank: number[] = [];
  [...positions].sort((a, b) => scores[b]! - scores[a]! || a - b).forEach((i, rank) => (serverRank[i] = rank));
  const blended = (i: number) => weight / (BLEND_K + serverRank[i]! + 1) + (1 - weight) / (BLEND_K + i + 1);
  return positions.sort((a, b) => blended(b) - blended(a) || a - b).map((i, place) => ({ id: head[i]!.id, score: head[place]!.score }));
}

/** What a rerank model reads of a snippet: where it sits, its title, its text. */
function snippetTexts(em: EntityManager): SnippetTexts {
  return async (ids) => {
    const rows: { id: string; title: string | null; breadcrumb: string | null; content: string }[] = await em.execute(
      `select id, title, breadcrumb, content from snippet where id = any(${TEXT_ARRAY})`,
      [textArray(ids)],
    );
    return new Map(rows.map((r) => [r.id, [r.breadcrumb, r.title, r.content].filter(Boolean).join('\n')]));
  };
}

/**
 * `ranked` with its first candidates reordered by the active reranker (docindex/rerank/providers.ts), and whether that
 * happened.
 */
export async function rerankRanked(deps: RerankDeps, em: EntityManager, query: string, ranked: Ranked[]): Promise<{ ranked: Ranked[]; reranked: boolean }> {
  if (ranked.length < 2) return { ranked, reranked: false };
  try {
    const reranker = await activeReranker(em, deps.config);
    if (!reranker) return { ranked, reranked: false };
    const head = ranked.slice(0, reranker.candidates);
    const byId = await snippetTexts(em)(head.map((r) => r.id));
    const scores = await reranker.score(query, head.map((r) => byId.get(r.id) ?? ''));
    if (scores.length !== head.length || scores.some((s) => !Number.isFinite(s))) throw new RerankError(`the reranker scored ${scores.length} of ${head.length} documents`);
    return { ranked: [...reorder(head, scores, reranker.weight), ...ranked.slice(head.length)], reranked: true };
  } catch (err) {
    deps.log.warn('reranking failed; answering in the search order', { error: (err as Error).message });
    return { ranked, reranked: false };
  }
}
