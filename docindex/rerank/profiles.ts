import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import type { SecretBox } from '../../core/secrets.js';
import { keyAddress } from '../entities/embedding-profile.js';
import { RerankProfile, rerankKeyContext, type RerankProfileConfig, type RerankProviderKind } from '../entities/rerank-profile.js';
import { MASK } from '../embeddings/profiles.js';
import { forgetActiveReranker } from './providers.js';

/**
 * Rerank profiles, stored and checked like embedding profiles (docindex/embeddings/profiles.ts): the API key is
 * write-only, sealed for the profile and the address it is sent to, and masked in every answer.
 */

export function serializeRerankProfile(p: RerankProfile) {
  return {
    id: p.id,
    name: p.name,
    provider: p.provider,
    model: p.model ?? null,
    active: p.active,
    config: { ...p.config, ...(p.config.apiKey && { apiKey: MASK }) },
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

export async function listRerankProfiles(em: EntityManager): Promise<RerankProfile[]> {
  return em.fork().find(RerankProfile, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function findRerankProfile(em: EntityManager, id: string): Promise<RerankProfile> {
  const p = await em.fork().findOne(RerankProfile, { id });
  if (!p) throw new NotFoundError(`Rerank profile ${id} not found`, 'RERANK_PROFILE_NOT_FOUND');
  return p;
}

export interface RerankProfileInput {
  name?: string;
  provider?: RerankProviderKind;
  model?: string | null;
  active?: boolean;
  config?: RerankProfileConfig;
}

const invalid = (message: string, key?: string) =>
  new ValidationError(message, 'INVALID_RERANK_PROFILE', key ? [{ pointer: `/body/config/${key}`, message }] : undefined);

/** What saving refuses beyond the body's schema: what each provider needs, and numbers in their range. */
export function checkRerankConfig(provider: RerankProviderKind, model: string | null, config: RerankProfileConfig): void {
  if (provider === 'remote') {
    let url: URL | undefined;
    try {
      url = new URL(config.url ?? '');
    } catch {
      // refused below
    }
    if (!url || !/^https?:$/.test(url.protocol)) throw invalid('A remote rerank profile needs config.url, the http(s) address of its /rerank endpoint', 'url');
    if (config.api !== undefined && config.api !== 'cohere' && config.api !== 'tei') throw invalid('config.api is `cohere` or `tei`', 'api');
  } else if (provider === 'local-transformers') {
    if (!model && !config.modelPath) throw invalid('A local-transformers rerank profile needs a model id or config.modelPath', 'modelPath');
    if (config.modelPath !== undefined && !path.isAbsolute(config.modelPath)) throw invalid('config.modelPath must be an absolute folder path', 'modelPath');
  } else throw new ValidationError(`Unknown rerank provider "${String(provider)}"`, 'INVALID_RERANK_PROFILE');
  const ranges: [keyof RerankProfileConfig, number, number][] = [['candidates', 2, 200], ['weight', 0, 1], ['timeoutMs', 100, 600_000], ['maxLength', 8, 8192], ['batchSize', 1, 256]];
  for (const [key, min, max] of ranges) {
    const v = config[key];
    if (v !== undefined && (typeof v !== 'number' || !(v >= min && v <= max) || (key !== 'weight' && !Number.isInteger(v)))) {
      throw invalid(`config.${key} must be a number from ${min} to ${max}`, key);
    }
  }
}

/**
 * The config as sent over the stored one. A key sent back masked (or left out) keeps its stored value, for the
 * address it was stored with only (a new `url` without the key again is 400 API_KEY_REQUIRED); an empty one removes
 * it; a new one is sealed for this profile and its address.
 */
export function mergeRerankConfig(stored: RerankProfileConfig, sent: RerankProfileConfig | undefined, id: string, secrets: SecretBox): RerankProfileConfig {
  const config: RerankProfileConfig = { ...stored, ...(sent ?? {}) };
  const fresh = sent?.apiKey;
  if (fresh === MASK || fresh === undefined) {
    config.apiKey = stored.apiKey;
    if (stored.apiKey && keyAddress(config.url) !== keyAddress(stored.url)) {
      const message = `The stored apiKey is only sent to the address it was saved with; send it again to use it with ${keyAddress(config.url)}`;
      throw new ValidationError(message, 'API_KEY_REQUIRED', [{ pointer: '/body/config/apiKey', message }]);
    }
  } else if (fresh !== '') config.apiKey = secrets.seal(fresh, rerankKeyContext(id, config.url));
  if (!config.apiKey) delete config.apiKey;
  return config;
}

/**
 * Creates (no `id`) or updates a profile. `active: true` makes it the active one, in the same transaction as
 * deactivating the others; `active: false` on the active one leaves none active (the RERANK_URL settings then apply).
 */
export async function saveRerankProfile(em: EntityManager, id: string | undefined, input: RerankProfileInput, secrets: SecretBox): Promise<RerankProfile> {
  const saved = await em.fork().transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', ['rerank-profiles']);
    const existing = id ? await tx.findOne(RerankProfile, { id }) : null;
    if (id && !existing) throw new NotFoundError(`Rerank profile ${id} not found`, 'RERANK_PROFILE_NOT_FOUND');
    const provider = input.provider ?? existing?.provider;
    if (!provider) throw new ValidationError('A new rerank profile needs a provider: local-transformers or remote', 'INVALID_RERANK_PROFILE');
    const profileId = existing?.id ?? randomUUID();
    const model = input.model === undefined ? (existing?.model ?? null) : input.model;
    const config = mergeRerankConfig(existing?.config ?? {}, input.config, profileId, secrets);
    checkRerankConfig(provider, model, config);
    if (input.active) await tx.nativeUpdate(RerankProfile, { active: true, id: { $ne: profileId } }, { active: false });
    const now = new Date();
    const profile = existing ?? tx.create(RerankProfile, { id: profileId, name: provider, provider, active: false, config: {}, createdAt: now, updatedAt: now });
    tx.assign(profile, { name: input.name ?? profile.name, provider, model, active: input.active ?? profile.active, config, updatedAt: now });
    await tx.flush();
    return profile;
  });
  forgetActiveReranker();
  return saved;
}

export async function deleteRerankProfile(em: EntityManager, id: string): Promise<void> {
  const deleted = await em.fork().nativeDelete(RerankProfile, { id });
  if (!deleted) throw new NotFoundError(`Rerank profile ${id} not found`, 'RERANK_PROFILE_NOT_FOUND');
  forgetActiveReranker();
}
