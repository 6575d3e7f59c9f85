import { describe, expect, it } from 'vitest';
import { distinctResults, PAGE_STEP } from '../../../docindex/search/distinct.js';

const r = (content: string, documentId: string, score: number, type = 'info') => ({ content, documentId, score, type });
const order = (rows: { content: string }[]) => rows.map((x) => x.content);

describe('distinct results', () => {
  it("moves a page's later snippets down so the next page's best one is not crowded out", () => {
    expect(PAGE_STEP).toBe(2);
    const ranked = [r('a1', 'A', 9), r('a2', 'A', 8), r('b1', 'B', 7), r('c1', 'C', 6), r('a3', 'A', 5), r('d1', 'D', 4)];
    // a2 counts as 2 places lower (one better sibling: 4th, after b1, tied with c1 whose place is the ranking's 4th),
    // a3 as 4 places lower (two: 9th, the end).
    expect(order(distinctResults(ranked))).toEqual(['a1', 'b1', 'a2', 'c1', 'd1', 'a3']);
  });

  it("keeps each page's best snippet in its order, and the scores descending", () => {
    const ranked = [r('a1', 'A', 9), r('b1', 'B', 8), r('a2', 'A', 7), r('c1', 'C', 6)];
    const out = distinctResults(ranked);
    expect(order(out)).toEqual(['a1', 'b1', 'c1', 'a2']);
    expect(out.map((x) => x.score)).toEqual([9, 8, 7, 6]);
  });

  it('drops a snippet whose text a better one already gave, of the same type only', () => {
    const ranked = [r('same text', 'A', 9), r('other', 'B', 8), r('same text', 'C', 7), r('same text', 'D', 6, 'code')];
    expect(distinctResults(ranked).map((x) => x.documentId)).toEqual(['A', 'B', 'D']);
  });
});
