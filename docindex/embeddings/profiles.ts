import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../core/config.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { type SecretBox, secretBox } from '../../core/secrets.js';
import { apiKeyContext, EmbeddingProfile, keyAddress, type ProfileConfig, type ProviderKind } from '../entities/embedding-profile.js';
import { checkConventions, vectorFingerprint } from './conventions.js';
import { checkDtype, DEFAULT_LOCAL_DIMENSIONS, DEFAULT_LOCAL_MODEL, LocalProvider, localModelPresent } from './local.js';
import type { EmbeddingProvider } from './provider.js';
import { RemoteProvider, type RemoteConfig } from './remote.js';

/** Config keys that are secrets: write-only, masked in every response. */
const SECRET_KEYS = ['apiKey'];
export const MASK = '********';

export function serializeProfile(p: EmbeddingProfile) {
  const config = { ...p.config };
  for (const key of SECRET_KEYS) if (config[key]) config[key] = MASK;
  return {
    id: p.id,
    name: p.name,
    provider: p.provider,
    model: p.model ?? null,
    dimensions: p.dimensions ?? null,
    default: p.isDefault,
    enabled: p.enabled,
    active: p.isDefault && p.enabled,
    config,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

export async function listProfiles(em: EntityManager): Promise<EmbeddingProfile[]> {
  return em.fork().find(EmbeddingProfile, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function activeProfile(em: EntityManager): Promise<EmbeddingProfile | null> {
  return em.fork().findOne(EmbeddingProfile, { isDefault: true, enabled: true });
}

/** The profile made at first start. */
export const DEFAULT_PROFILE_ID = 'default-local';

/**
 * When no profile exists at startup, the default local profile is created. It is enabled when its model can be
 * loaded: present on disk, or downloadable (EMBEDDING_ALLOW_DOWNLOADS, on by default), in which case it is
 * downloaded on first use. Otherwise it is created disabled, so indexing keeps working with keyword search, and
 * the log says where to put the model.
 */
export async function ensureDefaultProfile(em: EntityManager, config: Config, log: Logger): Promise<void> {
  await em.fork().transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', ['embedding-profiles']);
    if ((await tx.count(EmbeddingProfile, {})) > 0) return;
    const e = config.embeddings;
    const present = localModelPresent(e.defaultModel, e.cacheDir, e.defaultModelPath);
    const loadable = present || e.allowDownloads;
    const now = new Date();
    // A model folder names its own model; its size is learned from the first vectors.
    const model = e.defaultModelPath ? path.basename(e.defaultModelPath) : e.defaultModel;
    tx.create(EmbeddingProfile, {
      id: DEFAULT_PROFILE_ID,
      name: 'Local (transformers.js)',
      provider: 'local-transformers',
      model,
      dimensions: model === DEFAULT_LOCAL_MODEL ? DEFAULT_LOCAL_DIMENSIONS : null,
      isDefault: true,
      enabled: loadable,
      config: e.defaultModelPath ? { modelPath: e.defaultModelPath } : {},
      createdAt: now,
      updatedAt: now,
    });
    if (!loadable) {
      log.warn(
        `created the default local embedding profile disabled: ${e.defaultModel} is not in ${e.cacheDir} and downloads are off ` +
          '(EMBEDDING_ALLOW_DOWNLOADS=true, or EMBEDDING_MODEL_PATH); search is keyword-only until a profile is active',
      );
    } else if (!present) {
      log.info(
        `created the default local embedding profile: ${e.defaultModel} is downloaded from ${e.modelHost} into ${e.cacheDir} ` +
          'when the first library is indexed (EMBEDDING_ALLOW_DOWNLOADS=false keeps it from downloading)',
      );
    }
  });
}

/**
 * The default profile's model could not be had (offline, a firewall): the profile is disabled, so indexing and
 * search go on keyword-only instead of failing, and one warning says how to bring semantic search back. Returns
 * whether this call disabled it (concurrent jobs hitting the same failure log it once).
 */
export async function disableUnavailableDefault(em: EntityManager, reason: string, log: Logger): Promise<boolean> {
  const changed = await em.fork().nativeUpdate(EmbeddingProfile, { id: DEFAULT_PROFILE_ID, enabled: true }, { enabled: false, updatedAt: new Date() });
  if (changed) {
    log.warn(
      `disabled the default local embedding profile, search is keyword-only: ${reason} ` +
        'Put the model there (see "Embeddings" in docs/documentation-index.md for offline installs), then enable the profile again in Settings.',
    );
  }
  return changed > 0;
}

/**
 * A profile's config as sent over the stored one. A secret sent back masked (or left out) keeps its stored value,
 * an empty one removes it, a new one is sealed for the profile and its address (core/secrets.ts). A stored key is
 * only ever sent to the address it was stored with: keeping it while changing `baseUrl` is 400 API_KEY_REQUIRED
 * (send the key again). `id` is the profile the result is for; `stored` is that profile as saved, if it is.
 */
export function mergeConfig(
  stored: Pick<EmbeddingProfile, 'id' | 'config'> | null,
  sent: Record<string, unknown> | undefined,
  id: string,
  secrets: SecretBox,
): Record<string, unknown> {
  const before = stored?.id === id ? stored.config : {};
  const config: Record<string, unknown> = { ...before, ...(sent ?? {}) };
  const sameAddress = keyAddress(config.baseUrl) === keyAddress(before.baseUrl);
  for (const key of SECRET_KEYS) {
    const kept = before[key];
    const fresh = sent?.[key];
    if (fresh === MASK || fresh === undefined) {
      config[key] = kept;
      if (typeof kept === 'string' && kept && !sameAddress) {
        const message = `The stored ${key} is only sent to the address it was saved with; send it again to use it with ${keyAddress(config.baseUrl)}`;
        throw new ValidationError(message, 'API_KEY_REQUIRED', [{ pointer: `/body/profile/config/${key}`, message }]);
      }
    } else if (typeof fresh === 'string' && fresh !== '') {
      // The same key sent again keeps its sealed form, so saving an unchanged form changes nothing.
      config[key] = sameAddress && typeof kept === 'string' && kept && openedOrUndefined(secrets, kept, apiKeyContext(id, before.baseUrl)) === fresh
        ? kept
        : secrets.seal(fresh, apiKeyContext(id, config.baseUrl));
    }
    if (config[key] === undefined || config[key] === '') delete config[key];
  }
  return config;
}

function openedOrUndefined(secrets: SecretBox, sealed: string, context: string): string | undefined {
  try {
    return secrets.open(sealed, context);
  } catch {
    return undefined;
  }
}

export interface ProfileInput {
  id?: string;
  name?: string;
  provider: ProviderKind;
  model?: string | null;
  dimensions?: number | null;
  enabled?: boolean;
  default?: boolean;
  config?: Record<string, unknown>;
}

function checkConfig(input: ProfileInput & { model: string | null }, config: Record<string, unknown>): void {
  if (input.provider === 'remote-compatible') {
    const base = config.baseUrl;
    if (typeof base !== 'string' || !/^https?:\/\/\S+$/.test(base)) {
      throw new ValidationError('A remote-compatible profile needs config.baseUrl, an http(s) URL', 'INVALID_PROFILE');
    }
    if (!input.model) throw new ValidationError('A remote-compatible profile needs a model', 'INVALID_PROFILE');
  }
  if (input.provider === 'local-transformers' && !input.model && !config.modelPath) {
    throw new ValidationError('A local-transformers profile needs a model id or config.modelPath', 'INVALID_PROFILE');
  }
  checkConventions(input.provider, config);
  checkDtype(input.provider, config);
}

/**
 * Creates or updates a profile. A secret sent back masked (or left out) keeps its stored value, so a form can round
 * trip what GET returned. `default: true` makes it the default, in the same transaction as clearing the others.
 * A change to what its vectors are made with (model, prefixes, pooling: `vectorFingerprint`) deletes the vectors
 * stored for it, in the same transaction, so no query is compared with vectors made another way. Returns the
 * profile and whether the active profile changed, or changed how it embeds (the caller then re-embeds).
 */
export async function saveProfile(em: EntityManager, input: ProfileInput, secrets: SecretBox): Promise<{ profile: EmbeddingProfile; activeChanged: boolean }> {
  return em.fork().transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', ['embedding-profiles']);
    const before = await tx.findOne(EmbeddingProfile, { isDefault: true, enabled: true });
    const existing = input.id ? await tx.findOne(EmbeddingProfile, { id: input.id }) : null;
    const fingerprint = existing && vectorFingerprint(existing);
    const id = input.id ?? randomUUID();
    const config = mergeConfig(existing, input.config, id, secrets);
    const model = input.model === undefined ? (existing?.model ?? null) : input.model;
    checkConfig({ ...input, model }, config);
    const now = new Date();
    if (input.default) await tx.nativeUpdate(EmbeddingProfile, { isDefault: true }, { isDefault: false });
    const profile =
      existing ??
      tx.create(EmbeddingProfile, {
        id,
        name: input.name ?? input.provider,
        provider: input.provider,
        isDefault: false,
        enabled: true,
        config: {},
        createdAt: now,
        updatedAt: now,
      });
    tx.assign(profile, {
      name: input.name ?? profile.name,
      provider: input.provider,
      model,
      dimensions: input.dimensions === undefined ? (profile.dimensions ?? null) : input.dimensions,
      enabled: input.enabled ?? profile.enabled,
      isDefault: input.default ?? profile.isDefault,
      config,
      updatedAt: now,
    });
    await tx.flush();
    const remade = !!fingerprint && fingerprint !== vectorFingerprint(profile);
    if (remade) await tx.execute('delete from snippet_embedding where profile_id = ?', [profile.id]);
    const after = await tx.findOne(EmbeddingProfile, { isDefault: true, enabled: true });
    const changed = (before?.id ?? null) !== (after?.id ?? null) || (after?.id === profile.id && remade);
    return { profile, activeChanged: changed };
  });
}

export async function findProfile(em: EntityManager, id: string): Promise<EmbeddingProfile> {
  const p = await em.fork().findOne(EmbeddingProfile, { id });
  if (!p) throw new NotFoundError(`Embedding profile ${id} not found`, 'PROFILE_NOT_FOUND');
  return p;
}

/** A remote profile's settings; saving checked its `baseUrl` (checkConfig), which a row changed by hand may lack. */
function remoteConfig({ baseUrl, ...rest }: ProfileConfig): RemoteConfig {
  if (typeof baseUrl !== 'string') throw new ValidationError('A remote-compatible profile needs config.baseUrl, an http(s) URL', 'INVALID_PROFILE');
  return { ...rest, baseUrl };
}

/** A provider for a profile; null for keyword-only (`none`). */
export function createProvider(profile: Pick<EmbeddingProfile, 'id' | 'provider' | 'model' | 'dimensions' | 'config'>, config: Config): EmbeddingProvider | null {
  switch (profile.provider) {
    case 'none':
      return null;
    case 'remote-compatible': {
      // The key is opened when a request is about to be sent, for this profile and address only.
      const { apiKey, ...remote } = remoteConfig(profile.config);
      const key = () => (apiKey ? secretBox(config).open(apiKey, apiKeyContext(profile.id, remote.baseUrl)) : undefined);
      return new RemoteProvider(profile.id, profile.model ?? '', profile.dimensions ?? null, remote, key);
    }
    case 'local-transformers':
      return new LocalProvider(profile.id, profile.model ?? '', profile.dimensions ?? null, profile.config, {
        cacheDir: config.embeddings.cacheDir,
        allowDownloads: config.embeddings.allowDownloads,
        modelHost: config.embeddings.modelHost,
      });
    default:
      throw new ValidationError(`Unknown embedding provider "${String(profile.provider)}"`, 'INVALID_PROFILE');
  }
}

/**
 * The active profile's provider, one per process and profile version: a local model loads once and its thread is
 * reused; a changed profile gets a new provider and the old one is closed.
 */
const live = new Map<string, EmbeddingProvider | null>();
/** The active profile's id and version (`updated_at` as text), as `activeEmbeddingProvider` reads them; null: none active. */
export type ActiveProfileStamp = { id: string; stamp: string } | null;
/** Selects them (`id`, `stamp`); a query that reads other rows anyway can join it (docindex/search/context.ts). */
export const ACTIVE_PROFILE_SQL = `select id, updated_at::text as stamp from embedding_profile where is_default and enabled limit 1`;

/** `known`: the active profile already read with the request's other rows, which saves a round trip. */
export async function activeEmbeddingProvider(em: EntityManager, config: Config, known?: ActiveProfileStamp): Promise<EmbeddingProvider | null> {
  // Every semantic query asks: one indexed row's id and stamp, and the whole entity only when the profile changed.
  const active = known !== undefined ? known : ((await em.execute(ACTIVE_PROFILE_SQL)) as { id: string; stamp: string }[])[0];
  if (!active) return null;
  const key = `${active.id}@${active.stamp}`;
  if (!live.has(key)) {
    const profile = await activeProfile(em);
    if (!profile) return null;
    for (const [k, p] of live) {
      if (k.startsWith(`${profile.id}@`)) {
        void p?.close();
        live.delete(k);
      }
    }
    live.set(key, createProvider(profile, config));
  }
  return live.get(key)!;
}

/** Closes every provider this process opened (shutdown). */
export async function closeProviders(): Promise<void> {
  await Promise.all([...live.values()].map((p) => p?.close()));
  live.clear();
}
