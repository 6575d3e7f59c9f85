import type { Context } from 'koa';
import type { LibraryState } from '../entities/library.js';
import * as service from '../service.js';
import { librariesFromLockfile } from '../from-lockfile.js';
import { apiSchemas } from '../../schemas/index.js';
import { docindexSchemas } from '../schemas.js';
import type { RouteFactory } from '../../api/deps.js';

/** Libraries and versions (docs/documentation-index.md): /api/v1/libs. `:id` is the URL-encoded library id (`%2Fowner%2Frepo`). */
export const libraryRoutes: RouteFactory = (deps) => {
  const tags = ['documentation index'];
  const body = <T>(ctx: Context) => (ctx.request as { body?: unknown }).body as T;
  return [
    {
      method: 'GET',
      path: '/api/v1/libs',
      summary: 'List libraries',
      description: 'Items add `versions` (registered tags), `embeddingCount` and `indexedVersions` (`main` for the default branch, then indexed tags).',
      tags,
      query: docindexSchemas.librariesQuery,
      responses: { 200: { description: '`{libraries, total, limit, offset}`' } },
      handler: async (ctx: Context) => {
        const q = ctx.state.query as { state?: LibraryState; limit: number; offset: number };
        ctx.body = await service.listLibraries(deps, { ...q, limit: Math.min(q.limit, 200) });
      },
    },
    {
      method: 'POST',
      path: '/api/v1/libs',
      summary: 'Register a library (and start indexing it unless autoIndex is false)',
      description:
        'The id is `/<owner>/<repo>` from the remote URL, or for a local folder from its `origin` remote, else `/local/<folder name>`. ' +
        'A git-host remote is probed first (400 REPOSITORY_UNREACHABLE when it cannot be read); an existing id is 409 LIBRARY_EXISTS.',
      tags,
      body: docindexSchemas.libraryCreate,
      responses: { 201: { description: '`{library, job?}`' }, 409: { description: 'LIBRARY_EXISTS', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.status = 201;
        ctx.body = await service.createLibrary(deps, body(ctx));
      },
    },
    {
      method: 'POST',
      path: '/api/v1/libs/from-lockfile',
      summary: "Register and index the exact versions of a project's direct dependencies, from its lockfile or manifest",
      description:
        'package-lock.json, pnpm-lock.yaml, yarn.lock, package.json, requirements.txt, poetry.lock, uv.lock, pyproject.toml, Cargo.lock, Cargo.toml. ' +
        'Each direct dependency is answered `ready` (indexed), `queued` (being indexed) or `unknown` (its registry has no such package or version), ' +
        'with the libraryId to query. 400 LOCKFILE_UNSUPPORTED / LOCKFILE_INVALID, 413 LOCKFILE_TOO_LARGE.',
      tags,
      body: docindexSchemas.lockfile,
      bodyLimitBytes: 12 * 1024 * 1024,
      responses: {
        200: { description: '`{format, ecosystem, dependencies: [{name, version, libraryId, status, reason?}], summary, warnings}`' },
        400: { description: 'LOCKFILE_UNSUPPORTED, LOCKFILE_INVALID', schema: apiSchemas.error },
      },
      handler: async (ctx: Context) => {
        ctx.body = await librariesFromLockfile(deps, body(ctx));
      },
    },
    {
      method: 'GET',
      path: '/api/v1/libs/:id',
      summary: 'A library, with the tags of its versions',
      tags,
      responses: { 200: { description: 'The library' }, 404: { description: 'LIBRARY_NOT_FOUND', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = await service.getLibrary(deps, ctx.params.id!);
      },
    },
    {
      method: 'PATCH',
      path: '/api/v1/libs/:id',
      summary: 'Update title, description, branch, gitHostToken, refreshEvery, versionPolicy (null removes or restores the default); refreshPaused pauses or resumes its refresh schedule',
      tags,
      body: docindexSchemas.libraryUpdate,
      responses: { 200: { description: '`{library}`' }, 404: { description: 'LIBRARY_NOT_FOUND', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = { library: await service.updateLibrary(deps, ctx.params.id!, body(ctx)) };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v1/libs/:id',
      summary: 'Delete a library: cancels its jobs and removes its versions, documents, snippets, embeddings and rules',
      tags,
      responses: { 200: { description: '`{id, deleted, versionsDeleted, jobsCancelled}`' }, 404: { description: 'LIBRARY_NOT_FOUND', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = await service.deleteLibrary(deps, ctx.params.id!);
      },
    },
    {
      method: 'GET',
      path: '/api/v1/libs/:id/refresh',
      summary: "A library's refresh schedule: interval, version policy, paused, next and last run",
      description: 'The schedule is a Temporal Schedule (`refresh:<id>`), visible and pausable in the Temporal UI too. 404 REFRESH_OFF when the interval is `off`.',
      tags,
      responses: { 200: { description: '`{every, policy, paused, note, nextRunAt, lastRunAt}`' }, 404: { description: 'LIBRARY_NOT_FOUND, REFRESH_OFF', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = await service.libraryRefresh(deps, ctx.params.id!);
      },
    },
    {
      method: 'POST',
      path: '/api/v1/libs/:id/refresh',
      summary: 'Run the library\'s refresh now: re-index what moved, register and index new versions by its policy',
      tags,
      responses: { 202: { description: '`{triggered: true}`' }, 404: { description: 'LIBRARY_NOT_FOUND, REFRESH_OFF', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.status = 202;
        ctx.body = await service.refreshLibraryNow(deps, ctx.params.id!);
      },
    },
    {
      method: 'POST',
      path: '/api/v1/libs/:id/index',
      summary: 'Re-index the default branch and every registered version',
      description: '201 when a job was created, 200 when only already-active jobs were found. Body `{job, versionJobs}`.',
      tags,
      responses: { 200: { description: 'Active jobs' }, 201: { description: 'Jobs created' } },
      handler: async (ctx: Context) => {
        const { created, body: result } = await service.indexLibrary(deps, ctx.params.id!);
        ctx.status = created ? 201 : 200;
        ctx.body = result;
      },
    },
    {
      method: 'GET',
      path: '/api/v1/libs/:id/versions',
      summary: 'Versions of a library',
      tags,
      responses: { 200: { description: '`{versions}`' } },
      handler: async (ctx: Context) => {
        ctx.body = await service.listVersions(deps, ctx.params.id!);
      },
    },
    {
      method: 'POST',
      path: '/api/v1/libs/:id/versions/discover',
      summary: "Tags of a local library's repository (empty for git-host libraries and when git fails)",
      tags,
      responses: { 200: { description: '`{tags}`' } },
      handler: async (ctx: Context) => {
        ctx.body = await service.discoverTags(deps, ctx.params.id!);
      },
    },
    {
      method: 'POST',
      path: '/api/v1/libs/:id/versions',
      summary: 'Register a version (a git tag) and index it unless autoIndex is false',
      description: 'The tag must exist (400 TAG_NOT_FOUND); for git-host libraries it is checked against the remote tag list.',
      tags,
      body: docindexSchemas.versionCreate,
      responses: { 201: { description: '`{version, job}` (job null when autoIndex is false)' }, 409: { description: 'VERSION_EXISTS', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.status = 201;
        ctx.body = await service.addVersion(deps, ctx.params.id!, body(ctx));
      },
    },
    {
      method: 'DELETE',
      path: '/api/v1/libs/:id/versions/:tag',
      summary: 'Delete a version: cancels its jobs and removes its documents, snippets, embeddings and rules',
      tags,
      responses: { 200: { description: '`{id, deleted, jobsCancelled}`' }, 404: { description: 'VERSION_NOT_FOUND', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = await service.deleteVersion(deps, ctx.params.id!, ctx.params.tag!);
      },
    },
    {
      method: 'POST',
      path: '/api/v1/libs/:id/versions/:tag/index',
      summary: 'Index a version',
      tags,
      responses: { 200: { description: '`{job}`: the active job' }, 201: { description: '`{job}`: a new job' } },
      handler: async (ctx: Context) => {
        const { job, created } = await service.indexVersion(deps, ctx.params.id!, ctx.params.tag!);
        ctx.status = created ? 201 : 200;
        ctx.body = { job };
      },
    },
  ];
};
