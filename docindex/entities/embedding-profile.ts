import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { LocalConfig } from '../embeddings/local.js';
import type { RemoteConfig } from '../embeddings/remote.js';

export const PROVIDER_KINDS = ['local-transformers', 'remote-compatible', 'none'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/**
 * A profile's settings, as its provider reads them: a remote one's (whose `baseUrl` saving checks) or a local one's.
 * Keys neither knows are kept as they were sent.
 */
export type ProfileConfig = Partial<RemoteConfig> & LocalConfig & { [key: string]: unknown };

/**
 * How snippets are embedded. The active profile is the one that is both default and enabled; `config` holds the
 * provider's settings, secrets included: `apiKey` is sealed (core/secrets.ts, context `apiKeyContext`) and every
 * response masks it.
 */
export const EmbeddingProfile = defineEntity({
  name: 'EmbeddingProfile',
  tableName: 'embedding_profile',
  properties: (p) => ({
    id: p.string().primary(),
    name: p.string(),
    provider: p.string().$type<ProviderKind>(),
    model: p.string().nullable(),
    dimensions: p.integer().nullable(),
    isDefault: p.boolean().default(false),
    enabled: p.boolean().default(true),
    config: p.json<ProfileConfig>(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
  uniques: [
    {
      name: 'embedding_profile_one_default',
      expression: 'create unique index "embedding_profile_one_default" on "embedding_profile" ("is_default") where "is_default"',
    },
  ],
});
export type EmbeddingProfile = InferEntity<typeof EmbeddingProfile>;

/** The address a key is sent to, as compared: scheme, host, port and path, without trailing slashes. */
export function keyAddress(baseUrl: unknown): string {
  const text = typeof baseUrl === 'string' ? baseUrl.trim() : '';
  try {
    const u = new URL(text);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return text;
  }
}

/** What a profile's sealed API key belongs to: that profile, sending to that address; anywhere else it does not open. */
export const apiKeyContext = (profileId: string, baseUrl: unknown) => `embedding_profile:${profileId}:apiKey:${keyAddress(baseUrl)}`;
