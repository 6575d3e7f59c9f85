import { embedQuery, type EmbeddingProvider } from '../embeddings/provider.js';

/**
 * The vectors of the questions a provider was asked lately, at most `maxEntries` of them, the least recently asked
 * dropped first: assistants ask a library's common questions again and again, and embedding one costs a model
 * thread's turn (a local model) or a round trip and a fee (a remote one). Questions asked while the same one is being
 * embedded wait for it instead of embedding it again; a failure is not kept, so the next ask tries again.
 *
 * One cache per provider object (search.ts, `queryVector`): a provider is replaced whenever its profile changes
 * (docindex/embeddings/profiles.ts), so a vector is never answered for a model or settings other than its own. The
 * vectors are shared between answers and must not be written to (the scan normalises into a copy: vectors.ts).
 */
export class QueryVectors {
  private readonly entries = new Map<string, Promise<Float32Array>>();

  constructor(
    private readonly provider: EmbeddingProvider,
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(query: string): Promise<Float32Array> {
    const hit = this.entries.get(query);
    if (hit) {
      this.entries.delete(query); // re-insert: Map order is the recency order
      this.entries.set(query, hit);
      return hit;
    }
    const vector = embedQuery(this.provider, query);
    this.entries.set(query, vector);
    vector.catch(() => {
      if (this.entries.get(query) === vector) this.entries.delete(query);
    });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return vector;
  }
}
