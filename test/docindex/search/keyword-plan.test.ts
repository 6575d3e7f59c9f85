import { describe, expect, it } from 'vitest';
import { hasIdentifier, parseQuery, planKeywordSearch, termForms } from '../../../docindex/search/keyword-plan.js';

/** The keyword search plan (docindex/search/keyword-plan.ts): which terms are rare or common, and their shares. */
describe('keyword search plan', () => {
  it('divides the candidates between the terms, and takes a term held by at least its share as common', () => {
    const plan = planKeywordSearch(parseQuery('app websocket router'), [62, 3, 34], 100);
    expect(plan.share).toBe(34); // ceil(100 / 3)
    expect(plan.terms.map((t) => [t.snippets, t.common])).toEqual([
      [62, true],
      [3, false],
      [34, true], // exactly its share
    ]);
    expect(plan.rare).toEqual([1]);
    expect(plan.common).toEqual([0, 2]);
  });

  it('takes every term as rare without statistics (each counted 0)', () => {
    const plan = planKeywordSearch(parseQuery('app websocket'), [0, 0], 20);
    expect(plan.share).toBe(10);
    expect(plan.rare).toEqual([0, 1]);
    expect(plan.common).toEqual([]);
  });

  it('gives each term a share of at least one however few the candidates', () => {
    const plan = planKeywordSearch(parseQuery('a1 b2 c3'), [1, 0, 5], 1);
    expect(plan.share).toBe(1);
    expect(plan.common).toEqual([0, 2]);
    expect(plan.rare).toEqual([1]);
  });

  it('carries each term’s forms, and the excluded terms’ forms, in the query’s order', () => {
    const plan = planKeywordSearch(parseQuery('useEffect -legacy -"old api"'), [0], 10);
    expect(plan.terms[0]!.forms).toEqual([
      { config: 'simple', text: 'useEffect' },
      { config: 'english', text: 'useEffect' },
      { config: 'simple', text: 'use Effect' }, // the split identifier, a phrase
    ]);
    expect(plan.exclude).toEqual([termForms('legacy'), termForms('old api')]);
    expect(termForms('legacy')).toHaveLength(2); // nothing to split
  });

  it('tells a query naming something in code from one in words', () => {
    for (const q of ['setErrorHandler custom error handler', 'reply.send with a stream', 'FST_ERR_CTP_INVALID_MEDIA_TYPE error code', 'protect against __proto__ keys', 'what changed in listen()', 'Command::new with a name', 'TypeBox type provider']) {
      expect(hasIdentifier(q), q).toBe(true);
    }
    for (const q of ['limit the size of incoming request bodies', 'X-Forwarded-For header', 'is it faster than winston?', 'version 5.1, e.g. the new API']) {
      expect(hasIdentifier(q), q).toBe(false);
    }
  });
});
