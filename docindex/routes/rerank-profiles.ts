import type { Context } from 'koa';
import { secretBox } from '../../core/secrets.js';
import { deleteRerankProfile, findRerankProfile, listRerankProfiles, type RerankProfileInput, saveRerankProfile, serializeRerankProfile } from '../rerank/profiles.js';
import { MASK } from '../embeddings/profiles.js';
import { apiSchemas } from '../../schemas/index.js';
import { docindexSchemas } from '../schemas.js';
import type { RouteFactory } from '../../api/deps.js';

/** Rerank profiles (docs/ranking.md, "Reranking"): at most one active; API keys write-only and masked. */
export const rerankProfileRoutes: RouteFactory = (deps) => {
  const tags = ['documentation index'];
  const body = (ctx: Context) => (ctx.request as { body: RerankProfileInput }).body;
  const error = (code: string) => ({ description: code, schema: apiSchemas.error });
  const keyRule =
    'An apiKey sent back masked (`' + MASK + '`) or left out keeps its stored value, for the url it was stored with: a new `url` ' +
    'without the key again is 400 API_KEY_REQUIRED; an empty one removes it. A config a provider cannot use is 400 INVALID_RERANK_PROFILE.';
  return [
    {
      method: 'GET',
      path: '/api/v1/rerank-profiles',
      summary: 'Rerank profiles (API keys masked) and the active one',
      description: 'With none active, the RERANK_URL settings rerank if set (`settingsUrl`), else search results are not reranked.',
      tags,
      responses: { 200: { description: '`{activeProfileId, settingsUrl, profiles}`' } },
      handler: async (ctx: Context) => {
        const profiles = await listRerankProfiles(deps.orm.em);
        ctx.body = { activeProfileId: profiles.find((p) => p.active)?.id ?? null, settingsUrl: deps.config.rerank.url ?? null, profiles: profiles.map(serializeRerankProfile) };
      },
    },
    {
      method: 'POST',
      path: '/api/v1/rerank-profiles',
      summary: 'Create a rerank profile; `active: true` makes it the active one',
      description: keyRule,
      tags,
      body: docindexSchemas.rerankProfile,
      responses: { 201: { description: '`{profile}`' }, 400: error('INVALID_RERANK_PROFILE') },
      handler: async (ctx: Context) => {
        const profile = await saveRerankProfile(deps.orm.em, undefined, body(ctx), secretBox(deps.config, deps.log));
        ctx.status = 201;
        ctx.body = { profile: serializeRerankProfile(profile) };
      },
    },
    {
      method: 'GET',
      path: '/api/v1/rerank-profiles/:id',
      summary: 'One rerank profile (API key masked)',
      tags,
      responses: { 200: { description: '`{profile}`' }, 404: error('RERANK_PROFILE_NOT_FOUND') },
      handler: async (ctx: Context) => {
        ctx.body = { profile: serializeRerankProfile(await findRerankProfile(deps.orm.em, ctx.params.id!)) };
      },
    },
    {
      method: 'PUT',
      path: '/api/v1/rerank-profiles/:id',
      summary: 'Change a rerank profile; what is left out is kept',
      description: keyRule,
      tags,
      body: docindexSchemas.rerankProfile,
      responses: { 200: { description: '`{profile}`' }, 400: error('INVALID_RERANK_PROFILE'), 404: error('RERANK_PROFILE_NOT_FOUND') },
      handler: async (ctx: Context) => {
        const profile = await saveRerankProfile(deps.orm.em, ctx.params.id!, body(ctx), secretBox(deps.config, deps.log));
        ctx.body = { profile: serializeRerankProfile(profile) };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v1/rerank-profiles/:id',
      summary: 'Delete a rerank profile',
      tags,
      responses: { 204: { description: 'Deleted' }, 404: error('RERANK_PROFILE_NOT_FOUND') },
      handler: async (ctx: Context) => {
        await deleteRerankProfile(deps.orm.em, ctx.params.id!);
        ctx.status = 204;
      },
    },
  ];
};
