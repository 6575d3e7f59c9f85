import type { Context } from 'koa';
import { AppError } from '../../core/errors.js';
import { secretBox } from '../../core/secrets.js';
import { Library } from '../entities/library.js';
import { enqueueIndex } from '../service.js';
import { REMOTE_PRESETS } from '../embeddings/remote.js';
import { embedQuery } from '../embeddings/provider.js';
import { createProvider, findProfile, listProfiles, MASK, mergeConfig, type ProfileInput, saveProfile, serializeProfile } from '../embeddings/profiles.js';
import { EmbeddingProfile } from '../entities/embedding-profile.js';
import { apiSchemas } from '../../schemas/index.js';
import { docindexSchemas } from '../schemas.js';
import type { AppDeps, RouteFactory } from '../../api/deps.js';

/** A provider that failed the connection test: the upstream's problem, told plainly. */
class ProviderTestError extends AppError {
  readonly status = 502;
  constructor(message: string) {
    super(message, 'EMBEDDING_PROVIDER_ERROR');
  }
}

async function settings(deps: AppDeps) {
  const profiles = await listProfiles(deps.orm.em);
  return {
    activeProfileId: profiles.find((p) => p.isDefault && p.enabled)?.id ?? null,
    profiles: profiles.map(serializeProfile),
    presets: REMOTE_PRESETS,
  };
}

/** Embeds every indexed library (and its versions) for a newly active profile, through indexing jobs. */
async function reembed(deps: AppDeps): Promise<number> {
  const libs = await deps.orm.em.fork().find(Library, { lastIndexedAt: { $ne: null } });
  let jobs = 0;
  for (const lib of libs) {
    await enqueueIndex(deps, lib, null);
    jobs++;
  }
  return jobs;
}

export const embeddingSettingsRoutes: RouteFactory = (deps) => {
  const tags = ['documentation index'];
  return [
    {
      method: 'GET',
      path: '/api/v1/settings/embedding',
      summary: 'Embedding profiles (secrets masked), the active one, and remote presets',
      tags,
      responses: { 200: { description: '`{activeProfileId, profiles, presets}`' } },
      handler: async (ctx: Context) => {
        ctx.body = await settings(deps);
      },
    },
    {
      method: 'PUT',
      path: '/api/v1/settings/embedding',
      summary: 'Create or update a profile; `default: true` makes it the default',
      description:
        'A secret sent back masked (`' + MASK + '`) keeps its stored value, for the address it was stored with: a new ' +
        '`baseUrl` without the key again is 400 API_KEY_REQUIRED. When the active profile changes, every indexed ' +
        'library is re-indexed so that what lacks an embedding for the new profile gets one (`reembedJobs`).',
      tags,
      body: docindexSchemas.embeddingSettingsUpdate,
      responses: { 200: { description: '`{activeProfileId, profiles, presets, profile, reembedJobs}`' } },
      handler: async (ctx: Context) => {
        const { profile: input } = (ctx.request as { body: { profile: ProfileInput } }).body;
        const { profile, activeChanged } = await saveProfile(deps.orm.em, input, secretBox(deps.config, deps.log));
        const reembedJobs = activeChanged && profile.isDefault && profile.enabled && profile.provider !== 'none' ? await reembed(deps) : 0;
        ctx.body = { ...(await settings(deps)), profile: serializeProfile(profile), reembedJobs };
      },
    },
    {
      method: 'POST',
      path: '/api/v1/settings/embedding/test',
      summary: 'Embed a probe text with a profile and report dimensions and latency',
      description: '200 `{ok: true, model, dimensions, latencyMs}`; 502 EMBEDDING_PROVIDER_ERROR with the provider\'s error.',
      tags,
      body: docindexSchemas.embeddingTest,
      responses: { 200: { description: 'The provider answered' }, 502: { description: 'EMBEDDING_PROVIDER_ERROR', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        const body = (ctx.request as { body: { profileId?: string; profile?: ProfileInput } }).body;
        let target: Pick<EmbeddingProfile, 'id' | 'provider' | 'model' | 'dimensions' | 'config'>;
        if (body.profile) {
          const id = body.profile.id ?? 'unsaved';
          const stored = body.profile.id ? await deps.orm.em.fork().findOne(EmbeddingProfile, { id: body.profile.id }) : null;
          const config = mergeConfig(stored, body.profile.config, id, secretBox(deps.config));
          target = { id, provider: body.profile.provider, model: body.profile.model ?? null, dimensions: body.profile.dimensions ?? null, config };
        } else if (body.profileId) target = await findProfile(deps.orm.em, body.profileId);
        else {
          const active = await deps.orm.em.fork().findOne(EmbeddingProfile, { isDefault: true, enabled: true });
          if (!active) throw new ProviderTestError('No embedding profile is active: search is keyword-only');
          target = active;
        }
        // A test reports the first failure at once (indexing keeps its retries): a button must not hang for a minute.
        const provider = createProvider({ ...target, config: { ...target.config, maxAttempts: 1 } }, deps.config);
        if (!provider) {
          ctx.body = { ok: true, model: null, dimensions: 0, latencyMs: 0, keywordOnly: true };
          return;
        }
        const t0 = performance.now();
        try {
          const v = await embedQuery(provider, 'How do I install and configure this library?', AbortSignal.timeout(120_000));
          ctx.body = { ok: true, model: provider.model, dimensions: v.length, latencyMs: Math.round(performance.now() - t0) };
        } catch (err) {
          throw new ProviderTestError((err as Error).message);
        } finally {
          await provider.close();
        }
      },
    },
  ];
};
