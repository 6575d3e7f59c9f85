import { describe, expect, it } from 'vitest';
import { tokenBatches } from '../../../docindex/embeddings/batches.js';

const lengths = (batches: number[][]) => batches.map((b) => b.length);

describe('embedding batches by token budget', () => {
  it('puts many short texts in a batch and few long ones, in the order given', () => {
    const items = [...Array<number>(20).fill(10), ...Array<number>(6).fill(200)];
    const batches = tokenBatches(items, (n) => n, { maxTokens: 400, maxItems: 64 });
    expect(batches.flat()).toEqual(items);
    expect(lengths(batches)).toEqual([20, 2, 2, 2]); // 20 x 10 tokens, then 2 x 200 each
  });

  it('counts a batch as its count times its longest text, the padding included', () => {
    // 10, 10, 10 then 150: 4 x 150 = 600 > 400, so the long one starts a batch of its own.
    expect(lengths(tokenBatches([10, 10, 10, 150, 150], (n) => n, { maxTokens: 400, maxItems: 64 }))).toEqual([3, 2]);
  });

  it('caps the count whatever the lengths, and sends a text over the budget alone', () => {
    expect(lengths(tokenBatches(Array<number>(10).fill(1), (n) => n, { maxTokens: 1000, maxItems: 4 }))).toEqual([4, 4, 2]);
    expect(lengths(tokenBatches([5, 5000, 5], (n) => n, { maxTokens: 100, maxItems: 8 }))).toEqual([1, 1, 1]);
  });

  it('costs a text no more than the model reads of it', () => {
    // Cut at 256, eight texts of 10,000 tokens fit a budget of 2,048.
    expect(lengths(tokenBatches(Array<number>(8).fill(10_000), (n) => n, { maxTokens: 2048, maxItems: 64, truncateAt: 256 }))).toEqual([8]);
  });

  it('gives no batches for no texts and survives nonsense lengths', () => {
    expect(tokenBatches([], () => 1, { maxTokens: 10, maxItems: 2 })).toEqual([]);
    expect(lengths(tokenBatches([0, -3, Number.NaN, 4], (n) => n, { maxTokens: 8, maxItems: 0 }))).toEqual([1, 1, 1, 1]);
  });
});
