import type { Config } from '../../core/config.js';
import { PermanentError } from '../../core/errors.js';
import type { Library } from '../entities/library.js';
import { headCommit, localTags, remoteHead } from '../git.js';
import { LocalFolders } from '../local-folders.js';
import { remoteAccess } from '../remote-access.js';
import type { Logger } from '../../core/log.js';
import { lookupContext } from '../sources/index.js';
import { describePackage } from '../sources/packages.js';
import type { AvailableVersion } from './policy.js';

/**
 * What a library's source looks like now, read cheaply (no clone, no download): what its default scope would be
 * indexed at, and the versions it offers. A refresh compares `revision` with what was indexed; null means the source
 * has no such stamp and is read again every time (cheaply: a site answers conditional requests).
 */
export interface SourceHead {
  revision: string | null;
  versions: HeadVersion[];
}

/** A version the source offers, with the commit it stands for where the source says (a tag's). */
export interface HeadVersion extends AvailableVersion {
  commit: string | null;
}

export interface HeadDeps {
  config: Config;
  log: Logger;
}

/** The branch's head commit and the tags, from one `ls-remote` through the outbound guard. */
async function gitHostHead(deps: HeadDeps, lib: Library, signal?: AbortSignal): Promise<SourceHead> {
  const { head, tags } = await remoteHead(lib.sourceUrl, { ...remoteAccess(deps.config, lib, signal), branch: lib.branch });
  if (!head) throw new PermanentError(`Branch ${lib.branch ?? 'HEAD'} does not exist in ${lib.sourceUrl}`, 'BRANCH_NOT_FOUND');
  return { revision: head, versions: [...tags].map(([tag, commit]) => ({ version: tag, commit, yanked: false, publishedAt: null })) };
}

/**
 * The folder's checked-out commit and its tags. Checked against LOCAL_SOURCE_ROOTS again, as the crawl does. A
 * folder that is no repository has no stamp: it is read again (incrementally) every time.
 */
async function localHead(deps: HeadDeps, lib: Library): Promise<SourceHead> {
  const folder = await new LocalFolders(deps.config).resolve(lib.sourceUrl).catch((err: Error) => {
    throw new PermanentError(`The library's folder cannot be read: ${err.message}`, 'LIBRARY_FOLDER_UNREADABLE');
  });
  // Outside a repository, or before its first commit, `rev-parse HEAD` fails: no stamp, and no tags to read.
  const revision = await headCommit(folder);
  if (!revision) return { revision: null, versions: [] };
  const tags = await localTags(folder);
  return { revision, versions: tags.map((t) => ({ version: t.tag, commit: t.commit, yanked: false, publishedAt: null })) };
}

/** The registry's latest version (what the default scope should hold) and its published versions. */
async function packageHead(deps: HeadDeps, lib: Library, signal?: AbortSignal): Promise<SourceHead> {
  const info = await describePackage(lib, lookupContext(deps.config, deps.log, signal ?? AbortSignal.timeout(60_000)));
  return { revision: info.latest, versions: info.versions.map((v) => ({ version: v.version, commit: null, yanked: v.yanked, publishedAt: v.publishedAt })) };
}

export async function sourceHead(deps: HeadDeps, lib: Library, signal?: AbortSignal): Promise<SourceHead> {
  switch (lib.source) {
    case 'git-host':
      return gitHostHead(deps, lib, signal);
    case 'local':
      return localHead(deps, lib);
    case 'npm':
    case 'pypi':
    case 'crates':
      return packageHead(deps, lib, signal);
    case 'website':
      // No stamp: read again every time, cheaply, since unchanged pages answer conditional requests with 304.
      return { revision: null, versions: [] };
  }
}
