import fs from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'koa';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { repoConfigSchema } from '../parse/config.js';
import { isCredentialFolder, LocalFolders } from '../local-folders.js';
import { getConcurrency, setConcurrency } from '../settings.js';
import { setSlotLimit } from '../../jobs/slots.js';
import { apiSchemas } from '../../schemas/index.js';
import { docindexSchemas } from '../schemas.js';
import type { RouteFactory } from '../../api/deps.js';

/** A folder picker has no use for more entries in one folder (a folder of 100k subfolders is listed in part). */
const MAX_ENTRIES = 1000;

/** Settings, the folder picker and the config-file schema of the documentation index. */
export const indexSettingsRoutes: RouteFactory = (deps) => {
  const tags = ['documentation index'];
  const folders = new LocalFolders(deps.config);
  return [
    {
      method: 'GET',
      path: '/api/v1/settings/indexing',
      summary: 'Indexing settings',
      tags,
      responses: { 200: { description: '`{concurrency}` (default 2)', schema: docindexSchemas.indexingSettings } },
      handler: async (ctx: Context) => {
        ctx.body = { concurrency: await getConcurrency(deps.orm.em, deps.config.cpuCount) };
      },
    },
    {
      method: 'PUT',
      path: '/api/v1/settings/indexing',
      summary: 'Change how many indexing jobs run at once; takes effect at once, without a restart',
      tags,
      body: docindexSchemas.indexingSettings,
      responses: { 200: { description: '`{concurrency}`, clamped', schema: docindexSchemas.indexingSettings } },
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
        'Answers `{path, parent, directories: [{name, path, isGitRepository}]}` (at most 1000 folders). Limited to ' +
        'LOCAL_SOURCE_ROOTS (default: the home folder), compared by real path; credential folders (.ssh, .gnupg, .aws, ' +
        '...) and DATA_DIR are never listed or entered (400 SOURCE_NOT_ALLOWED). A relative path is 400; a missing ' +
        'folder is 404.',
      tags,
      query: docindexSchemas.fsBrowseQuery,
      responses: { 200: { description: 'The folder and its subfolders' }, 404: { description: 'FOLDER_NOT_FOUND', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        const raw = ctx.state.query?.path as string | undefined;
        const showHidden = ['1', 'true'].includes(String(ctx.state.query?.showHidden));
        const folder = await folders.resolve(raw ?? folders.start);
        const entries = await fs.readdir(folder, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw new NotFoundError(`${folder} is not a folder`, 'FOLDER_NOT_FOUND');
          throw new ValidationError(`${folder} cannot be read: ${err.code}`, 'FOLDER_UNREADABLE');
        });
        // Real folders only (a symlink is not followed), never a credential folder or DATA_DIR, hidden ones on request.
        const candidates = entries
          .filter((e) => e.isDirectory() && (showHidden || !e.name.startsWith('.')) && !isCredentialFolder(folder, e.name))
          .sort((a, b) => a.name.localeCompare(b.name))
          .slice(0, MAX_ENTRIES);
        const directories = (
          await Promise.all(
            candidates.map(async (e) => {
              const p = path.join(folder, e.name);
              if (!(await folders.allows(p))) return undefined;
              const isGitRepository = await fs.stat(path.join(p, '.git')).then(() => true, () => false);
              return { name: e.name, path: p, isGitRepository };
            }),
          )
        ).filter((d) => d !== undefined);
        const parent = path.dirname(folder);
        ctx.body = { path: folder, parent: parent !== folder && (await folders.allows(parent)) ? parent : null, directories };
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
