import fs from 'node:fs';
import path from 'node:path';
import type * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { isWithinTokenLimit as referenceWithin } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it, vi } from 'vitest';
import { countTokensWithin } from '../../../docindex/parse/tokens.js';

// gpt-tokenizer's functions as they are, with the early-stopping one's calls counted.
vi.mock('gpt-tokenizer/encoding/o200k_base', async (original) => {
  const actual = await original<typeof o200k>();
  return { ...actual, isWithinTokenLimit: vi.fn(actual.isWithinTokenLimit) };
});
const earlyStops = vi.mocked(referenceWithin);
const PLAIN = { disallowedSpecial: new Set<string>() };

const fixtures = path.join(import.meta.dirname, 'fixtures');
const text = fs
  .readdirSync(fixtures)
  .filter((f) => /\.(md|rst|ts|py)$/.test(f))
  .map((f) => fs.readFileSync(path.join(fixtures, f), 'utf8'))
  .join('\n\n');

describe('countTokensWithin', () => {
  it('counts a text up to four characters per token of the limit whole, with the count the early-stopping one gives', () => {
    for (const limit of [50, 300, 1200]) {
      for (const chars of [limit, limit + 1, 2 * limit, 3 * limit, 4 * limit]) {
        const piece = text.slice(0, chars);
        earlyStops.mockClear();
        const counted = countTokensWithin(piece, limit);
        expect(earlyStops).not.toHaveBeenCalled();
        expect([limit, chars, counted]).toEqual([limit, chars, referenceWithin(piece, limit, PLAIN)]);
      }
    }
  });

  it('stops early on a longer text', () => {
    earlyStops.mockClear();
    expect(countTokensWithin(text.slice(0, 4000), 300)).toBe(false);
    expect(earlyStops).toHaveBeenCalledTimes(1);
  });
});
