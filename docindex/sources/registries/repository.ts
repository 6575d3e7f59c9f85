/**
 * A package's repository as an https URL git can clone, from the ways registries write it: npm's `repository`
 * (`git+https://...`, `git@host:owner/repo.git`, `github:owner/repo`, a bare `owner/repo`), PyPI's project URLs
 * (a repository's page, often deeper: `/tree/main/docs`), a crate's `package.repository`.
 */
const SHORTHAND_HOSTS: Record<string, string> = { github: 'github.com', gitlab: 'gitlab.com', bitbucket: 'bitbucket.org' };

/** Hosts known to serve git repositories at `owner/repo`; a company's own is recognised by its first label. */
const GIT_HOSTS = new Set(['github.com', 'gitlab.com', 'bitbucket.org', 'codeberg.org', 'git.sr.ht']);
const GIT_HOST_LABEL = /^(git|github|gitlab|gitea|forgejo|codeberg)\./;

/** Where a repository's page ends and a view inside it begins (`/tree/main`, GitLab's `/-/`). */
const VIEW_SEGMENTS = new Set(['-', 'tree', 'blob', 'src', 'issues', 'pulls', 'wiki', 'releases', 'commits', 'discussions', 'actions']);

function shorthand(raw: string): string | null {
  const m = /^(?:(github|gitlab|bitbucket):)?([A-Za-z0-9][\w.-]*)\/([\w.-]+)$/.exec(raw);
  return m ? `https://${SHORTHAND_HOSTS[m[1] ?? 'github']}/${m[2]}/${m[3]}` : null;
}

/** The https URL of a repository reference; null for what is not one (a gist, a file: URL, garbage). */
export function repositoryUrl(raw: string | null | undefined): string | null {
  // eslint-disable-next-line no-control-regex
  if (!raw || raw.length > 2048 || /[\s\u0000-\u001f\u007f]/.test(raw)) return null;
  const short = shorthand(raw);
  if (short) return short;
  const scp = /^(?:[\w.-]+@)?([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+):(?!\/)([^#]+)/.exec(raw);
  const text = scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? `https://${scp[1]}/${scp[2]}` : raw.replace(/^git\+/, '');
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return null;
  }
  if (!['https:', 'http:', 'git:', 'ssh:'].includes(u.protocol) || !u.hostname) return null;
  const scheme = u.protocol === 'http:' ? 'http' : 'https';
  const port = u.protocol === 'https:' || u.protocol === 'http:' ? (u.port ? `:${u.port}` : '') : '';
  const pathname = u.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
  if (!pathname || pathname === '/') return null;
  return `${scheme}://${u.hostname}${port}${pathname}`;
}

/** A page URL on a git host trimmed to its repository (`.../owner/repo/tree/main/docs` -> `.../owner/repo`); null off git hosts. */
export function gitHostRepository(raw: string | null | undefined): string | null {
  const url = repositoryUrl(raw);
  if (!url) return null;
  const u = new URL(url);
  if (!GIT_HOSTS.has(u.hostname) && !GIT_HOST_LABEL.test(u.hostname)) return null;
  const segments = u.pathname.split('/').filter(Boolean);
  const view = segments.findIndex((s) => VIEW_SEGMENTS.has(s));
  const kept = view === -1 ? segments : segments.slice(0, view);
  // GitLab nests groups (group/sub/repo); the others are owner/repo
  const repo = u.hostname.startsWith('gitlab') ? kept : kept.slice(0, 2);
  if (repo.length < 2) return null;
  return `${u.protocol}//${u.host}/${repo.join('/')}`;
}
