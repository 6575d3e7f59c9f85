import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * What the embed stage needs from an embedding provider. Profiles (local transformers.js, OpenAI-compatible remote,
 * keyword-only) arrive with the embeddings issue; until a profile is active there is no provider and the stage
 * embeds nothing, which leaves search to keywords.
 */
export interface EmbeddingProvider {
  readonly profileId: string;
  readonly model: string;
  readonly dimensions: number;
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

export async function activeEmbeddingProvider(_em: EntityManager): Promise<EmbeddingProvider | null> {
  return null;
}
