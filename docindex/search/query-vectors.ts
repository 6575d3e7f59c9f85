import { embedAs, type EmbeddingProvider } from '../embeddings/provider.js';
import { SharedCalls } from './shared-calls.js';

/** Questions embedded together at most: those that arrive while the provider is busy wait, then share one call. */
const MAX_BATCH = 8;
/**
 * Calls at once to a provider that may run them side by side (a remote server): a question does not wait for
 * another's round trip until this many are under way.
 */
const MAX_CALLS = 4;

/**
 * A provider's query vectors for search. The questions asked lately are kept, at most `maxEntries` of them, the least
 * recently asked dropped first: assistants ask a library's common questions again and again, and embedding one costs
 * a model thread's turn (a local model) or a round trip and a fee (a remote one). A question asked while the same one
 * is being embedded waits for it; a failure is not kept, so the next ask tries again.
 *
 * Questions that arrive while the provider is busy are embedded together in its next call, as the vector scan shares
 * passes (vectors.ts): a local model's thread runs one call at a time (`oneCallAtATime`), and one run over a few short
 * questions costs little more than one over a single question, where a queue of single runs would make the last one
 * wait for all. A provider that can run calls side by side (a remote server) is busy only with MAX_CALLS under way,
 * so a question never waits for another's round trip before then. A question asked while it is idle goes at once.
 *
 * One per provider object (search.ts, `queryVector`): a provider is replaced whenever its profile changes
 * (docindex/embeddings/profiles.ts), so a vector is never answered for a model or settings other than its own. The
 * vectors are shared between answers and must not be written to (the scan normalises into a copy: vectors.ts).
 */
export class QueryVectors {
  private readonly entries = new Map<string, Promise<Float32Array>>();
  private readonly calls: SharedCalls<string, Float32Array>;

  constructor(
    provider: EmbeddingProvider,
    private readonly maxEntries: number,
  ) {
    const embed = async (queries: string[]) => {
      const vectors = await embedAs(provider, 'query', queries);
      if (vectors.length !== queries.length) throw new Error(`the provider answered ${vectors.length} vectors for ${queries.length} questions`);
      return vectors;
    };
    this.calls = new SharedCalls(embed, MAX_BATCH, provider.oneCallAtATime ? 1 : MAX_CALLS);
  }

  get size(): number {
    return this.entries.size;
  }

  get(query: string): Promise<Float32Array> {
    if (this.maxEntries <= 0) return this.calls.get(query);
    const hit = this.entries.get(query);
    if (hit) {
      this.entries.delete(query); // re-insert: Map order is the recency order
      this.entries.set(query, hit);
      return hit;
    }
    const vector = this.calls.get(query);
    this.entries.set(query, vector);
    vector.catch(() => {
      if (this.entries.get(query) === vector) this.entries.delete(query);
    });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return vector;
  }
}
