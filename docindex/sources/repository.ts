import type { ActivityDeps } from '../../activities/deps.js';
import { PermanentError } from '../../core/errors.js';
import type { Library, LibraryVersion } from '../entities/library.js';
import { checkoutLocalTag, headCommit, remoteTags, shallowClone, shallowFetch } from '../git.js';
import { LocalFolders } from '../local-folders.js';
import { remoteAccess } from '../remote-access.js';
import type { Checkout } from './types.js';

/** How a checkout reports: git's own progress (objects received, files checked out) is the crawl's progress. */
export interface CheckoutProgress {
  signal: AbortSignal;
  onProgress(what: string): void;
}

/** A repository's files in a folder: the local folder itself, a private copy at a tag, or a shallow clone. */
export async function checkoutRepository(
  deps: ActivityDeps,
  lib: Library,
  version: LibraryVersion | null,
  workdir: string,
  p: CheckoutProgress,
): Promise<Checkout> {
  if (lib.source === 'local') {
    // Checked again on every run: the folder may have become a symlink, or LOCAL_SOURCE_ROOTS narrower, since.
    const folders = new LocalFolders(deps.config);
    const folder = await folders.resolve(lib.sourceUrl).catch((err: Error) => {
      throw new PermanentError(`The library's folder cannot be read: ${err.message}`);
    });
    // One git call: outside a repository (or before its first commit) `rev-parse HEAD` fails, and the commit is null.
    if (!version) return { root: folder, commit: await headCommit(folder), skip: await folders.excludedBelow(), warnings: [] };
    await checkoutLocalTag(folder, version.tag, workdir, p.signal, p.onProgress);
    return { root: workdir, commit: await headCommit(workdir), warnings: [] };
  }
  if (version) {
    const tags = await remoteTags(lib.sourceUrl, remoteAccess(deps.config, lib, p.signal));
    if (!tags.has(version.tag)) throw new PermanentError(`Tag ${version.tag} does not exist in ${lib.sourceUrl}`);
  }
  await shallowClone(lib.sourceUrl, workdir, { ...remoteAccess(deps.config, lib, p.signal), ref: version?.tag ?? lib.branch, onProgress: p.onProgress });
  return { root: workdir, commit: await headCommit(workdir), warnings: [] };
}

/**
 * A package version's repository at the commit or tag it was published from, in `workdir`: the commit the registry
 * records (npm's gitHead), else the first of the usual tag spellings that exists. Throws when none can be read.
 */
export async function checkoutPublished(
  deps: ActivityDeps,
  repo: { url: string; ref?: string },
  name: string,
  version: string,
  workdir: string,
  p: CheckoutProgress,
): Promise<{ commit: string | null; ref: string }> {
  const access = { ...remoteAccess(deps.config, { id: '', gitHostToken: null }, p.signal), onProgress: p.onProgress };
  if (repo.ref && /^[0-9a-f]{40}$/.test(repo.ref)) {
    await shallowFetch(repo.url, workdir, repo.ref, access);
    return { commit: await headCommit(workdir), ref: repo.ref };
  }
  const tags = await remoteTags(repo.url, access);
  const bare = name.replace(/^@[^/]+\//, '');
  const ref = [repo.ref, `v${version}`, version, `${name}@${version}`, `${bare}@${version}`, `${bare}-v${version}`, `${bare}-${version}`].find((t) => t && tags.has(t));
  if (!ref) throw new PermanentError(`${repo.url} has no tag for version ${version}`, 'TAG_NOT_FOUND');
  await shallowClone(repo.url, workdir, { ...access, ref });
  return { commit: await headCommit(workdir), ref };
}
