import { describe, expect, it } from 'vitest';
import { identifierWords } from '../../../docindex/parse/code-words.js';
import { splitIdentifiers } from '../../../docindex/search/keyword-plan.js';

/** The content words keyword search indexes at weight D (docindex/parse/code-words.ts): identifiers that split, split. */
describe('identifierWords', () => {
  it('keeps the identifiers that split, split as queries are, and leaves plain words and punctuation out', () => {
    expect(identifierWords('Keep useEffect small. Call pool.open(max_size) on the HTTPServer, e.g. v1.2')).toBe('use Effect pool open max size HTTP Server e g  v1 2');
    expect(identifierWords('Plain prose, with a dash - and $HOME, #include, --verbose and dots...')).toBe('');
    expect(identifierWords('getServerSideProps')).toBe(splitIdentifiers('getServerSideProps'));
  });

  it('takes non-ASCII letters as part of an identifier, and ASCII punctuation as its end', () => {
    expect(identifierWords('café.bar "x.y" (a_b) [c:d] <e/f>')).toBe('café bar x y a b c d e f');
  });

  it('is what matching every identifier and keeping those that split gives, on random text', () => {
    // The rule as docindex/parse/code-words.ts states it, identifier by identifier.
    const reference = (text: string) =>
      // eslint-disable-next-line no-control-regex
      [...text.matchAll(/[^\x00-\x20!"%&'()*+,;<=>?@[\\\]^`{|}~\x7f]+/g)]
        .map(([m]) => m)
        .filter((m) => /[a-z0-9][A-Z]|[A-Z][A-Z][a-z]|[^_.:/#$-][_.:/#$-]+[^_.:/#$-]/.test(m))
        .map(splitIdentifiers)
        .join(' ');
    const alphabet = ['a', 'b', 'Z', 'Q', '7', '_', '.', ':', '/', '-', '#', '$', ' ', '\n', '(', '"', "'", '<', 'é', '東', '🚀', '\\', ']', '^'];
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 2000; i++) {
      const text = Array.from({ length: Math.floor(random() * 40) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      expect(identifierWords(text), JSON.stringify(text)).toBe(reference(text));
    }
  });

  it('is linear in a long run of capitals', () => {
    const t0 = performance.now();
    expect(identifierWords(`${'B'.repeat(300_000)}Cd`)).toBe(`${'B'.repeat(300_000)} Cd`);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});
