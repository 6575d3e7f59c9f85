import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Context } from 'koa';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { repoConfigSchema } from '../../core/docs/config.js';
import { getConcurrency, setConcurrency } from '../../docindex/settings.js';
import { setSlotLimit } from '../../jobs/slots.js';
import { apiSchemas } from '../../schemas/index.js';
import type { RouteFactory } from '../app.js';

/** Settings, the folder picker and the config-file schema of the documentation index. */
export const indexSettingsRoutes: RouteFactory = (deps) => {
  const tags = ['documentation index'];
  return [
    {
      method: 'GET',
      path: '/api/v1/settings/indexing',
      summary: 'Indexing settings',
      tags,
      responses: { 200: { description: '`{concurrency}` (default 2)', schema: apiSchemas.indexingSettings } },
      handler: async (ctx: Context) => {
        ctx.body = { concurrency: await getConcurrency(deps.orm.em, deps.config.cpuCount) };
      },
    },
    {
      method: 'PUT',
      path: '/api/v1/settings/indexing',
      summary: 'Change how many indexing jobs run at once; takes effect at once, without a restart',
      tags,
      body: apiSchemas.indexingSettings,
      responses: { 200: { description: '`{concurrency}`, clamped', schema: apiSchemas.indexingSettings } },
      handler: async (ctx: Context) => {
        const requested = (ctx.request as { body: { concurrency: number } }).body.concurrency;
        const concurrency = await setConcurrency(deps.orm.em, requested, deps.config.cpuCount);
        await setSlotLimit(deps.temporal, deps.config, 'indexing', concurrency);
        ctx.body = { concurrency };
      },
    },
    {
      method: 'GET',
      path: '/api/v1/fs/browse',
      summary: 'Subfolders of a server folder, for a folder picker',
      description:
        'Answers `{path, parent, directories: [{name, path, isGitRepository}]}`. Limited to LOCAL_SOURCE_ROOTS when set. ' +
        'A relative path is 400; a missing folder is 404.',
      tags,
      query: apiSchemas.fsBrowseQuery,
      responses: { 200: { description: 'The folder and its subfolders' }, 404: { description: 'FOLDER_NOT_FOUND', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        const roots = deps.config.localSourceRoots;
        const raw = ctx.state.query?.path as string | undefined;
        const showHidden = ['1', 'true'].includes(String(ctx.state.query?.showHidden));
        const folder = path.resolve(raw ?? roots[0] ?? os.homedir());
        if (raw !== undefined && !path.isAbsolute(raw)) throw new ValidationError('path must be absolute', 'INVALID_PATH');
        const inside = (r: string) => folder === r || folder.startsWith(r + path.sep);
        if (roots.length && !roots.some(inside)) {
          throw new ValidationError(`${folder} is outside the folders allowed by LOCAL_SOURCE_ROOTS`, 'SOURCE_NOT_ALLOWED');
        }
        const entries = await fs.readdir(folder, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw new NotFoundError(`${folder} is not a folder`, 'FOLDER_NOT_FOUND');
          throw new ValidationError(`${folder} cannot be read: ${err.code}`, 'FOLDER_UNREADABLE');
        });
        const directories = await Promise.all(
          entries
            .filter((e) => e.isDirectory() && (showHidden || !e.name.startsWith('.')))
            .sort((a, b) => a.name.localeCompare(b.name))
            .map(async (e) => {
              const p = path.join(folder, e.name);
              const isGitRepository = await fs.stat(path.join(p, '.git')).then(() => true, () => false);
              return { name: e.name, path: p, isGitRepository };
            }),
        );
        const parent = path.dirname(folder);
        ctx.body = { path: folder, parent: parent !== folder && (!roots.length || roots.some((r) => parent === r || parent.startsWith(r + path.sep))) ? parent : null, directories };
      },
    },
    {
      method: 'GET',
      path: '/api/v1/schema/service-config.json',
      summary: 'JSON Schema of the per-repository config file (gristmill.json, or context7.json)',
      tags,
      responses: { 200: { description: 'The JSON Schema', contentType: 'application/schema+json' } },
      handler: async (ctx: Context) => {
        ctx.type = 'application/schema+json';
        ctx.body = JSON.stringify(repoConfigSchema, null, 2);
      },
    },
  ];
};
