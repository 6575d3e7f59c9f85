import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { keyAddress } from './embedding-profile.js';

export const RERANK_PROVIDERS = ['local-transformers', 'remote'] as const;
export type RerankProviderKind = (typeof RERANK_PROVIDERS)[number];

/**
 * A rerank profile's settings. `remote`: `url` (the `/rerank` endpoint), `api`, `apiKey` (sealed); `local-transformers`:
 * `modelPath`, `maxLength`, `batchSize`. Both: `candidates`, `weight`, `timeoutMs`, which default to the RERANK_*
 * settings (docindex/configuration.ts).
 */
export interface RerankProfileConfig {
  url?: string;
  api?: 'cohere' | 'tei';
  apiKey?: string;
  modelPath?: string;
  maxLength?: number;
  batchSize?: number;
  candidates?: number;
  weight?: number;
  timeoutMs?: number;
}

/**
 * How a search's first results are reranked (docs/ranking.md, "Reranking"). At most one profile is active; none
 * active: the RERANK_URL settings, if set. `config.apiKey` is sealed (core/secrets.ts, context `rerankKeyContext`)
 * and every response masks it.
 */
export const RerankProfile = defineEntity({
  name: 'RerankProfile',
  tableName: 'rerank_profile',
  properties: (p) => ({
    id: p.string().primary(),
    name: p.string(),
    provider: p.string().$type<RerankProviderKind>(),
    model: p.string().nullable(),
    active: p.boolean().default(false),
    config: p.json<RerankProfileConfig>(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
  uniques: [
    {
      name: 'rerank_profile_one_active',
      expression: 'create unique index "rerank_profile_one_active" on "rerank_profile" ("active") where "active"',
    },
  ],
});
export type RerankProfile = InferEntity<typeof RerankProfile>;

/** What a rerank profile's sealed API key belongs to: that profile, sending to that address; anywhere else it does not open. */
export const rerankKeyContext = (profileId: string, url: unknown) => `rerank_profile:${profileId}:apiKey:${keyAddress(url)}`;
