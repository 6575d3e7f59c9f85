import { describe, expect, it } from 'vitest';
import { PAGE_WEIGHT, withPageEvidence, type Candidate } from '../../../docindex/search/evidence.js';

const c = (id: string, documentId: string, terms: number[]): Candidate => ({ id, documentId, terms, score: terms.reduce((a, b) => a + b, 0) });

describe('evidence per page', () => {
  it('lifts a page whose snippets answer the question together above one snippet elsewhere that holds every word once', () => {
    // Two terms; "long" holds both moderately, the page's two snippets one term each, strongly.
    const long = c('long', 'other', [1.5, 1.5]);
    const a = c('a', 'page', [2.8, 0]);
    const b = c('b', 'page', [0, 1.5]);
    expect([long, a, b].sort((x, y) => y.score - x.score).map((x) => x.id)).toEqual(['long', 'a', 'b']);
    const ranked = withPageEvidence([long, a, b], 10);
    expect(ranked.map((r) => r.id)).toEqual(['a', 'long', 'b']);
    expect(ranked[0]!.score).toBeCloseTo(2.8 + PAGE_WEIGHT * 1.5);
  });

  it('gives a page repeating one word nothing for the repeats', () => {
    const repeats = ['r1', 'r2', 'r3', 'r4'].map((id) => c(id, 'big', [1, 0]));
    const ranked = withPageEvidence([...repeats, c('one', 'small', [1, 0])], 10);
    expect(new Set(ranked.map((r) => r.score))).toEqual(new Set([1]));
  });

  it('keeps the limit, and ties in id order', () => {
    const ranked = withPageEvidence([c('b', 'x', [1]), c('a', 'y', [1]), c('c', 'z', [0.5])], 2);
    expect(ranked.map((r) => r.id)).toEqual(['a', 'b']);
  });
});
