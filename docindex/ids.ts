import path from 'node:path';

/**
 * Library ids are `/<owner>/<repo>`. From a git-host URL they are its first and last path segments (so
 * `https://gitlab.com/group/sub/repo` is `/group/repo`); from a local folder, its `origin` remote when it has one,
 * else `/local/<folder name>`. Versions are `/<owner>/<repo>/<tag>`.
 */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function tidy(segment: string): string | undefined {
  const s = segment.replace(/\.git$/i, '');
  return SEGMENT.test(s) ? s : undefined;
}

function fromPath(p: string): string | undefined {
  const parts = p.split('/').filter(Boolean);
  if (parts.length < 2) return undefined;
  const owner = tidy(parts[0]!);
  const repo = tidy(parts[parts.length - 1]!);
  return owner && repo ? `/${owner}/${repo}` : undefined;
}

/** https, http, ssh:// and git:// URLs, and scp-like `git@host:owner/repo.git`. */
export function isGitRemoteUrl(url: string): boolean {
  return /^(https?|ssh|git):\/\/[^\s]+$/i.test(url) || /^[\w.-]+@[\w.-]+:[^\s]+$/.test(url);
}

export function libraryIdFromRemote(url: string): string | undefined {
  const scp = /^[\w.-]+@[\w.-]+:(.+)$/.exec(url);
  if (scp) return fromPath(scp[1]!);
  try {
    return fromPath(new URL(url).pathname);
  } catch {
    return undefined;
  }
}

/** A folder's library id: from its origin remote, else `/local/<name>` (name made id-safe). */
export function libraryIdFromFolder(folder: string, originUrl?: string): string {
  const fromOrigin = originUrl ? libraryIdFromRemote(originUrl) : undefined;
  if (fromOrigin) return fromOrigin;
  const name =
    path
      .basename(path.resolve(folder))
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '') || 'root';
  return `/local/${name}`;
}

export function versionIdOf(libraryId: string, tag: string): string {
  return `${libraryId}/${tag}`;
}

/** `/owner/repo` or `/owner/repo/<version>`; undefined when it is neither. */
export function parseLibraryRef(ref: string): { libraryId: string; version: string | undefined } | undefined {
  const m = /^\/([^/\s]+)\/([^/\s]+)(?:\/(\S+))?$/.exec(ref.trim());
  if (!m) return undefined;
  return { libraryId: `/${m[1]}/${m[2]}`, version: m[3] };
}

/** A tag is a git ref name: no spaces, no `..`, no control characters, not starting with `-`. */
export function isValidTag(tag: string): boolean {
  return (
    tag.length > 0 &&
    tag.length <= 200 &&
    !tag.startsWith('-') &&
    !tag.includes('..') &&
    !/[\s~^:?*[\\]/.test(tag) &&
    ![...tag].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f) &&
    !tag.endsWith('.lock') &&
    !tag.endsWith('/')
  );
}
