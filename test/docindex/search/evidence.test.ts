import { describe, expect, it } from 'vitest';
import { DECLARATION_PRIOR, KEYWORD_PAGE_WEIGHT, PAGE_NAME_WEIGHT, SEMANTIC_PAGE_WEIGHT, withPageEvidence, withSiblingSimilarity, type Candidate } from '../../../docindex/search/evidence.js';
import { isDeclarationFile, pageNameStems } from '../../../docindex/search/page-names.js';

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
    expect(ranked[0]!.score).toBeCloseTo(2.8 + KEYWORD_PAGE_WEIGHT * 1.5);
  });

  it('gives a page repeating one word nothing for the repeats', () => {
    const repeats = ['r1', 'r2', 'r3', 'r4'].map((id) => c(id, 'big', [1, 0]));
    const ranked = withPageEvidence([...repeats, c('one', 'small', [1, 0])], 10);
    expect(new Set(ranked.map((r) => r.score))).toEqual(new Set([1]));
  });

  it('lifts a documentation page named for a query term above one that only mentions it more', () => {
    // "WebSocket client": a page of events mentioning both words beats the WebSocket page without its name.
    const events = c('events', 'DiagnosticsChannel', [2, 1]);
    const ws = c('ws', 'WebSocket', [2.2, 0]);
    const files: Record<string, string> = { DiagnosticsChannel: 'docs/api/DiagnosticsChannel.md', WebSocket: 'docs/api/WebSocket.md' };
    expect(withPageEvidence([events, ws], 10).map((r) => r.id)).toEqual(['events', 'ws']);
    const naming = { terms: ['WebSocket', 'client'], namesOf: (d: string) => pageNameStems(files[d]!) };
    const ranked = withPageEvidence([events, ws], 10, naming);
    expect(ranked.map((r) => r.id)).toEqual(['ws', 'events']);
    expect(ranked[0]!.score).toBeCloseTo(2.2 + PAGE_NAME_WEIGHT * 2.2);
    expect(ranked[1]!.score).toBeCloseTo(3);
  });

  it('puts the documented implementation above a type declaration that matches a little more', () => {
    // "instance_of validator": a stub's signature holds the name as often as the docstring's function, and is shorter.
    const files: Record<string, string> = { stub: 'src/attr/validators.pyi', impl: 'src/attr/validators.py', dts: 'types/reply.d.ts' };
    const stub = c('stub', 'stub', [2, 1]);
    const impl = c('impl', 'impl', [1.8, 1]);
    expect(withPageEvidence([stub, impl], 10).map((r) => r.id)).toEqual(['stub', 'impl']);
    const naming = { terms: ['instance_of', 'validator'], namesOf: () => [], isDeclaration: (d: string) => isDeclarationFile(files[d]!) };
    const ranked = withPageEvidence([stub, impl], 10, naming);
    expect(ranked.map((r) => r.id)).toEqual(['impl', 'stub']);
    expect(ranked[1]!.score).toBeCloseTo(DECLARATION_PRIOR * 3);
    expect(['types/reply.d.ts', 'index.d.mts', 'a.pyi', 'a.py', 'docs/d.ts.md', 'lib/reply.ts'].map(isDeclarationFile)).toEqual([true, true, true, false, false, false]);
  });

  it('keeps the limit, and ties in id order', () => {
    const ranked = withPageEvidence([c('b', 'x', [1]), c('a', 'y', [1]), c('c', 'z', [0.5])], 2);
    expect(ranked.map((r) => r.id)).toEqual(['a', 'b']);
  });
});

describe('evidence per page, semantic', () => {
  it("credits a snippet with its page's next most similar snippet, never with itself", () => {
    const ranked = withSiblingSimilarity(
      [
        { id: 'alone', score: 0.8, page: 1 },
        { id: 'a', score: 0.75, page: 2 },
        { id: 'b', score: 0.7, page: 2 },
      ],
      10,
    );
    expect(ranked.map((r) => r.id)).toEqual(['a', 'b', 'alone']);
    expect(ranked[0]!.score).toBeCloseTo(0.75 + SEMANTIC_PAGE_WEIGHT * 0.7);
    expect(ranked[1]!.score).toBeCloseTo(0.7 + SEMANTIC_PAGE_WEIGHT * 0.75);
    expect(ranked[2]!.score).toBeCloseTo(0.8);
  });

  it('weighs a candidate of a declaration file down by DECLARATION_PRIOR, after its sibling credit', () => {
    const candidates = [
      { id: 'decl', score: 0.8, page: 1, declaration: true },
      { id: 'decl2', score: 0.5, page: 1, declaration: true },
      { id: 'doc', score: 0.75, page: 2, declaration: false },
    ];
    expect(withSiblingSimilarity(candidates, 10).map((r) => r.id)).toEqual(['decl', 'decl2', 'doc']);
    const ranked = withSiblingSimilarity(candidates, 10, (c) => c.declaration);
    expect(ranked.map((r) => r.id)).toEqual(['doc', 'decl', 'decl2']);
    expect(ranked[1]!.score).toBeCloseTo(DECLARATION_PRIOR * (0.8 + SEMANTIC_PAGE_WEIGHT * 0.5));
    // A dissimilar one is not raised by it.
    expect(withSiblingSimilarity([{ id: 'x', score: -0.2, page: 1 }], 1, () => true)).toEqual([{ id: 'x', score: -0.2 }]);
  });

  it('adds nothing for a dissimilar sibling, and keeps the limit', () => {
    const ranked = withSiblingSimilarity([{ id: 'x', score: 0.5, page: 1 }, { id: 'y', score: -0.2, page: 1 }], 1);
    expect(ranked).toEqual([{ id: 'x', score: 0.5 }]);
  });
});
