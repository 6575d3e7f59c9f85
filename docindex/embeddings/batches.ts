/**
 * Embedding batches sized by tokens rather than by count. A model pads every text of a batch to the batch's longest,
 * so a batch costs about its count times its longest text: texts of one length in a batch waste nothing, and a fixed
 * budget of padded tokens lets short texts go many at a time and long ones few (the pipeline reads snippets shortest
 * first, docindex/pipeline.ts embedSnippets, so neighbours are of similar length).
 */
export interface BatchLimits {
  /** Padded tokens per batch: its count times its longest text. A text longer than this goes alone. */
  maxTokens: number;
  /** Texts per batch, whatever their length (a provider's request or memory limit). */
  maxItems: number;
  /** Longer texts are cut there by the model, so they cost no more than this (the local model's truncation). */
  truncateAt?: number;
}

/**
 * The pipeline's batches: two texts of all-MiniLM-L6-v2's 256 word pieces, 32 of up to 16. Small batches were the
 * fastest on 2 cores (bench/README.md, "Embed": a budget of 512 beat 2,048 and 4,096 by a third and more), as the
 * activations of a big batch no longer fit the caches; short texts still share a call.
 */
export const EMBED_BATCH_LIMITS: BatchLimits = { maxTokens: 512, maxItems: 32, truncateAt: 256 };

/** Splits `items`, in their order, into consecutive batches within `limits`; `tokens` says an item's length. */
export function tokenBatches<T>(items: readonly T[], tokens: (item: T) => number, limits: BatchLimits): T[][] {
  const maxItems = Math.max(1, Math.floor(limits.maxItems));
  const out: T[][] = [];
  let batch: T[] = [];
  let longest = 0;
  for (const item of items) {
    const n = Math.max(1, Math.min(tokens(item) || 1, limits.truncateAt ?? Infinity));
    const widest = Math.max(longest, n);
    if (batch.length && (batch.length >= maxItems || widest * (batch.length + 1) > limits.maxTokens)) {
      out.push(batch);
      batch = [];
      longest = n;
    } else {
      longest = widest;
    }
    batch.push(item);
  }
  if (batch.length) out.push(batch);
  return out;
}
