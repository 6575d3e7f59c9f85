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

/** A git remote as git will reach it: which transport, which host (brackets of an IPv6 literal removed), which port. */
export interface GitRemote {
  transport: 'http' | 'git' | 'ssh';
  host: string;
  port: number | undefined;
  /** The repository's path on the host. */
  path: string;
}

/** A host name or address git and the resolver read the same way (no `-` first: it would be an option to ssh). */
const HOST = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\])$/;
const USER = /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/;

/**
 * https://, http://, ssh:// and git:// URLs, and scp-like `[user@]host:owner/repo.git`; undefined for anything else.
 * Refused as well: whitespace and control characters, a user or host starting with `-` (`-ox@x:o/r` is an option to
 * git or ssh, not a remote), and a password in the URL (a token goes in gitHostToken, which is kept encrypted).
 */
export function parseGitRemote(url: string): GitRemote | undefined {
  // eslint-disable-next-line no-control-regex
  if (!url || url.length > 2048 || /[\s\u0000-\u001f\u007f]/.test(url) || url.startsWith('-')) return undefined;
  const scp = /^(?:([^@/:]+)@)?([^@/:]+):(?!\/\/)(.+)$/.exec(url);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    const [, user, host, path] = scp;
    if ((user !== undefined && !USER.test(user)) || !HOST.test(host!) || host!.startsWith('[')) return undefined;
    return { transport: 'ssh', host: host!, port: undefined, path: path! };
  }
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const scheme = u.protocol.slice(0, -1).toLowerCase();
  if (scheme !== 'https' && scheme !== 'http' && scheme !== 'ssh' && scheme !== 'git') return undefined;
  if (u.password || (u.username && !USER.test(u.username)) || !HOST.test(u.hostname)) return undefined;
  return {
    transport: scheme === 'https' || scheme === 'http' ? 'http' : scheme,
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: u.port ? Number(u.port) : undefined,
    path: u.pathname,
  };
}

export function isGitRemoteUrl(url: string): boolean {
  return parseGitRemote(url) !== undefined;
}

/** The id a remote's path names; lenient (a local folder's origin may carry credentials: they do not matter here). */
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

/**
 * `/owner/repo` or `/owner/repo/<version>`; undefined when it is neither. A scoped npm package is the one id of
 * three segments: `/npm/@scope/name[/<version>]`.
 */
export function parseLibraryRef(ref: string): LibraryRef | undefined {
  // Control characters (NUL above all, which PostgreSQL refuses in text) are never part of an id.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(ref)) return undefined;
  const m = /^\/([^/\s]+)\/(@[^/\s]+\/[^/\s]+|[^/\s]+)(?:\/(\S+))?$/.exec(ref.trim());
  if (!m || (m[2]!.startsWith('@') && m[1] !== 'npm')) return undefined;
  return { libraryId: `/${m[1]}/${m[2]}`, version: m[3] };
}

export interface LibraryRef {
  libraryId: string;
  version: string | undefined;
}

/** The most libraries a list may name (docindex/search/multi-library.ts searches them all at once). */
export const MAX_LIBRARY_LIST = 20;

/** The `libraryId` that names every indexed library (docs/documentation-index.md, "Search across libraries"). */
export const ALL_LIBRARIES = '*';

/** The ids of a comma-separated list, trimmed, blanks dropped (a tag holding a comma can only be named alone). */
export const splitLibraryList = (list: string): string[] =>
  list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Whether a `libraryId` names several libraries (a list) or all of them, rather than one. */
export const isLibraryList = (libraryId: string): boolean => libraryId.includes(',') || libraryId.trim() === ALL_LIBRARIES;

/**
 * A list of references, duplicates dropped, in the order given; `all` for `*` alone; undefined when an entry is
 * not a reference (or `*` stands beside others). Callers bound the list's length first (splitLibraryList).
 */
export function parseLibraryRefList(list: string): LibraryRef[] | 'all' | undefined {
  const items = splitLibraryList(list);
  if (items.length === 1 && items[0] === ALL_LIBRARIES) return 'all';
  const refs: LibraryRef[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const ref = parseLibraryRef(item);
    if (!ref) return undefined;
    const key = `${ref.libraryId}\n${ref.version ?? ''}`;
    if (!seen.has(key)) refs.push(ref);
    seen.add(key);
  }
  return refs.length ? refs : undefined;
}

/** A package's library id: `/npm/<name>` (`/npm/@scope/name`), `/pypi/<name>`, `/crates/<name>`. */
export const libraryIdOfPackage = (ecosystem: string, name: string): string => `/${ecosystem}/${name}`;

/**
 * A site's library id, `/websites/<host and path>` with `.` and `/` as `_` (how Context7 names sites): the start URL
 * `https://docs.example.com/guide/` is `/websites/docs_example_com_guide`.
 */
export function libraryIdOfSite(startUrl: string): string {
  const u = new URL(startUrl);
  const slug = `${u.hostname}${u.port ? `_${u.port}` : ''}${u.pathname}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 120);
  return `/websites/${slug}`;
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
