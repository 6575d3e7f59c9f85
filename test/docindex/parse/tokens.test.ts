import fs from 'node:fs';
import path from 'node:path';
import type * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as referenceCount } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it, vi } from 'vitest';
import { countTokens, countTokensWithin } from '../../../docindex/parse/tokens.js';

// gpt-tokenizer as it is, with its counting calls counted.
vi.mock('gpt-tokenizer/encoding/o200k_base', async (original) => {
  const actual = await original<typeof o200k>();
  return { ...actual, countTokens: vi.fn(actual.countTokens) };
});
const libraryCounts = vi.mocked(referenceCount);
const PLAIN = { disallowedSpecial: new Set<string>() };
const reference = (text: string) => referenceCount(text, PLAIN);

const fixtures = path.join(import.meta.dirname, 'fixtures');
const text = fs
  .readdirSync(fixtures)
  .filter((f) => !f.endsWith('.ipynb'))
  .map((f) => fs.readFileSync(path.join(fixtures, f), 'utf8'))
  .join('\n\n');

/** What the encoding's split treats specially: letter case, contractions, digits, line ends, runs of spaces, markup of special tokens, other scripts. */
const awkward = [
  "Don't SHOUT, it's the CLI's ALLCAPS'LL and we'VE O'Neill's x'd",
  'line one\r\nline two\n\n\n    indented\t\ttabs  \n   \r\n',
  '1234567 3.14159 0x1F 10,000,000 v1.2.3-rc.1 #42',
  'const a = b?.c ?? d; // `=>` <= >= !== &&= ||= ... /* */ \\\\ /path/to/file.ts:12:5',
  '<|endoftext|> <|im_start|>system<|im_end|>',
  'naïve café Ελληνικά русский 中文文本 日本語のテキスト 한국어 עברית العربية',
  'emoji 👩‍👩‍👧 🚀🚀 flags 🇫🇷 e\u0301 combining a\u0308\u0304 zero\u200bwidth',
  '    '.repeat(40) + 'x',
];

describe('countTokens', () => {
  it("gives the library's count of the whole text, counted again from kept pieces", () => {
    for (const sample of [text, ...awkward, awkward.join(' '), text.slice(0, 5000)]) {
      expect(countTokens(sample)).toBe(reference(sample));
      expect(countTokens(sample)).toBe(reference(sample));
    }
  });
});

describe('countTokensWithin', () => {
  it("gives the library's count when within the limit, else false", () => {
    for (const limit of [50, 300, 1200]) {
      for (const chars of [limit, limit + 1, 2 * limit, 3 * limit, 4 * limit, 8 * limit]) {
        const piece = text.slice(0, chars);
        const exact = reference(piece);
        expect([limit, chars, countTokensWithin(piece, limit)]).toEqual([limit, chars, exact <= limit ? exact : false]);
      }
    }
  });

  it('stops counting once the limit is passed', () => {
    // Words no earlier count has seen, so each is counted by the library once.
    const words = Array.from({ length: 5000 }, (_, i) => `zq${i.toString(36)}x`).join(' ');
    libraryCounts.mockClear();
    expect(countTokensWithin(words, 300)).toBe(false);
    expect(libraryCounts.mock.calls.length).toBeLessThanOrEqual(301);
  });
});
