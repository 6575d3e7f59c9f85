import fs from 'node:fs/promises';
import path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { formatIp, parseIp } from '../core/ip.js';
import { redact } from '../core/redact.js';
import { isAddressRefusal, type OutboundGuard } from '../outbound/guard.js';
import { parseGitRemote } from './ids.js';

/**
 * Git operations of the indexer. A git-host token goes to git through environment config
 * (GIT_CONFIG_KEY_n=http.extraHeader), never on a command line or in a remote URL, so `ps` and `.git/config`
 * never show it; every git error is redacted before it goes anywhere. A URL is always given after `--`, so it is
 * never read as an option.
 *
 * A remote's URL is a user's, so git reaches it only where the outbound guard allows: over http(s) through the
 * guard's proxy (each connection, redirects included, checked when it is made); over git:// and ssh at the address
 * the guard checked (the URL's host replaced by it, or ssh told `HostName` with the name kept for host keys).
 */
export class GitError extends Error {
  constructor(message: string, token?: string | null) {
    super(redact(message, [token]));
    this.name = 'GitError';
  }
}

/** How a remote is reached: the guard, the token (if any), and the cancellation. */
export interface RemoteAccess {
  guard: OutboundGuard;
  token?: string | null;
  signal?: AbortSignal;
}

function baseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    GIT_TERMINAL_PROMPT: '0', // fail at once instead of waiting for a password nobody will type
    GIT_CONFIG_NOSYSTEM: '1',
  };
}

function git(baseDir: string | undefined, env: Record<string, string> = baseEnv(), signal?: AbortSignal, onProgress?: (what: string) => void): SimpleGit {
  return simpleGit({
    ...(baseDir && { baseDir }),
    timeout: { block: 5 * 60_000 },
    ...(signal && { abort: signal }),
    // git's progress lines (objects received, files checked out): proof that a long clone is moving.
    ...(onProgress && { progress: ({ stage, progress }: { stage: string; progress: number }) => onProgress(`${stage} ${progress}%`) }),
    // The environment is ours, not user input: GIT_CONFIG_* carry the auth header and the proxy, GIT_SSH_COMMAND the
    // checked address. URLs and tags are user input and stay under simple-git's other guards (no ext::, no
    // --upload-pack).
    allowEnvironment: Object.keys(env),
    unsafe: { allowUnsafeConfigEnvCount: true, allowUnsafeSshCommand: true },
  }).env(env);
}

/** The URL to give git and the environment that makes it connect only where the guard allows. */
async function reach(url: string, a: RemoteAccess): Promise<{ url: string; env: Record<string, string> }> {
  const remote = parseGitRemote(url);
  if (!remote) throw new GitError('Not a git remote URL (https://, ssh://, git:// or user@host:owner/repo)');
  let address: string;
  try {
    address = (await a.guard.resolve(remote.host))[0]!.address;
  } catch (err) {
    if (isAddressRefusal(err)) throw err;
    const code = (err as { code?: string }).code;
    throw new GitError(`${remote.host} could not be resolved (${code ?? (err as Error).message})`);
  }
  const config: [string, string][] = [];
  const env = baseEnv();
  if (a.token) {
    const basic = Buffer.from(`x-access-token:${a.token}`).toString('base64');
    config.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
  }
  if (remote.transport === 'http') {
    config.push(['http.proxy', await a.guard.proxyUrl()], ['http.proxyAuthMethod', 'basic']);
  } else if (remote.transport === 'git') {
    const ip = parseIp(address)!;
    const host = ip.length === 16 ? `[${formatIp(ip)}]` : formatIp(ip);
    url = `git://${host}${remote.port ? `:${remote.port}` : ''}${remote.path}`;
  } else {
    // Host names and addresses are checked by parseGitRemote and the guard: nothing here needs shell quoting.
    env.GIT_SSH_COMMAND = `ssh -o HostName=${address} -o HostKeyAlias=${remote.host} -o ProxyCommand=none -o ProxyJump=none -o BatchMode=yes`;
  }
  env.GIT_CONFIG_COUNT = String(config.length);
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return { url, env };
}

async function run<T>(token: string | null | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new GitError((err as Error).message.trim().split('\n').slice(0, 5).join(' '), token);
  }
}

/** The tags in `ls-remote` output, tag -> commit (peeled for annotated tags). */
function parseTags(out: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const line of out.split('\n')) {
    const m = /^([0-9a-f]{40})\s+refs\/tags\/(.+?)(\^\{\})?$/.exec(line.trim());
    if (m && (m[3] || !tags.has(m[2]!))) tags.set(m[2]!, m[1]!);
  }
  return tags;
}

/** Tags of a remote, tag -> commit (peeled for annotated tags). */
export async function remoteTags(url: string, a: RemoteAccess): Promise<Map<string, string>> {
  const r = await reach(url, a);
  return parseTags(await run(a.token, () => git(undefined, r.env, a.signal).raw(['ls-remote', '--tags', '--', r.url])));
}

/**
 * What a remote's branch (its default branch, HEAD, when none) and tags point at now, in one `ls-remote`: a refresh
 * compares them with what was indexed without cloning anything. `head` is null when the branch does not exist.
 */
export async function remoteHead(url: string, a: RemoteAccess & { branch?: string | null }): Promise<{ head: string | null; tags: Map<string, string> }> {
  const r = await reach(url, a);
  const ref = a.branch ? `refs/heads/${a.branch}` : 'HEAD';
  const out = await run(a.token, () => git(undefined, r.env, a.signal).raw(['ls-remote', '--', r.url, ref, 'refs/tags/*']));
  const head = out.split('\n').map((line) => /^([0-9a-f]{40})\s+(\S+)$/.exec(line.trim())).find((m) => m?.[2] === ref)?.[1] ?? null;
  return { head, tags: parseTags(out) };
}

/** Checks that the remote answers (and the token, if any, is accepted). */
export async function probeRemote(url: string, a: RemoteAccess): Promise<void> {
  const r = await reach(url, a);
  await run(a.token, () => git(undefined, r.env, a.signal).raw(['ls-remote', '--heads', '--', r.url]));
}

/** A shallow clone at a branch or tag (default branch when neither), without the token persisting anywhere. */
export async function shallowClone(
  url: string,
  target: string,
  a: RemoteAccess & { ref?: string | null; onProgress?: (what: string) => void },
): Promise<void> {
  const r = await reach(url, a);
  const args = ['--depth', '1', '--single-branch', '--no-tags', ...(a.ref ? ['--branch', a.ref] : [])];
  // --progress: git prints progress only to a terminal unless asked, and the progress is the crawl's heartbeat.
  await run(a.token, () => git(undefined, r.env, a.signal, a.onProgress).raw(['clone', '--progress', ...args, '--', r.url, target]));
}

/**
 * One commit of a remote, shallow, in `target` (a package's version published from it: npm's gitHead). Hosts serve
 * a commit by its id when it is reachable from a ref (git's protocol v2 does by default).
 */
export async function shallowFetch(url: string, target: string, commit: string, a: RemoteAccess & { onProgress?: (what: string) => void }): Promise<void> {
  if (!/^[0-9a-f]{40}$/.test(commit)) throw new GitError(`${commit} is not a commit id`);
  const r = await reach(url, a);
  await fs.mkdir(target, { recursive: true });
  const g = () => git(target, r.env, a.signal, a.onProgress);
  await run(a.token, () => g().raw(['init', '--quiet']));
  await run(a.token, () => g().raw(['fetch', '--progress', '--depth', '1', '--no-tags', '--', r.url, commit]));
  await run(a.token, () => g().raw(['checkout', '--quiet', '--detach', 'FETCH_HEAD']));
}

/**
 * A local repository's content at `tag`, in `target`, without touching the user's working tree or index:
 * a `--shared` clone borrows the objects and checks the tag out in the copy.
 */
export async function checkoutLocalTag(repo: string, tag: string, target: string, signal?: AbortSignal, onProgress?: (what: string) => void): Promise<void> {
  await run(null, () => git(undefined, baseEnv(), signal, onProgress).raw(['clone', '--progress', '--shared', '--no-checkout', '--quiet', '--', repo, target]));
  await run(null, () => git(target, baseEnv(), signal, onProgress).raw(['checkout', '--quiet', '--detach', `refs/tags/${tag}`]));
}

/**
 * Whether git could find a repository at `dir`: a `.git` (folder or file) there or in a folder above, or a `HEAD`
 * there or above (a bare repository). Our git runs with none of the GIT_DIR family set (`baseEnv`), so this is where
 * git itself looks. Asking first spares a folder outside any repository a git process: starting one from a large
 * process copies its page tables, 20 to 50 ms with the event loop stopped (bench/README.md, Index). Where this says
 * yes, git decides (a mount point or `safe.directory` may still stop it).
 */
export async function mayBeInRepository(dir: string): Promise<boolean> {
  // From the real path, as git starts from its working directory: a link into a repository is inside it.
  const real = await fs.realpath(dir).catch(() => path.resolve(dir));
  for (let d = real; ; d = path.dirname(d)) {
    for (const name of ['.git', 'HEAD']) {
      if (await fs.lstat(path.join(d, name)).then(() => true, () => false)) return true;
    }
    if (path.dirname(d) === d) return false;
  }
}

/**
 * What git answers about the local folder `dir`, or `none` when the folder is in no repository (git is then not
 * started: `mayBeInRepository`) or git fails.
 */
async function askLocal<T>(dir: string, none: T, ask: (g: SimpleGit) => Promise<T>): Promise<T> {
  if (!(await mayBeInRepository(dir))) return none;
  try {
    return await ask(git(dir));
  } catch {
    return none;
  }
}

export function headCommit(dir: string): Promise<string | null> {
  return askLocal(dir, null, async (g) => (await g.revparse(['HEAD'])).trim() || null);
}

export function isRepository(dir: string): Promise<boolean> {
  return askLocal(dir, false, async (g) => (await g.revparse(['--show-toplevel'])).trim().length > 0);
}

/** Tags of a local repository with their commits; empty when it is not a repository or git fails. */
export function localTags(dir: string): Promise<{ tag: string; commit: string }[]> {
  return askLocal(dir, [], async (g) =>
    (await g.raw(['for-each-ref', '--format=%(refname:strip=2) %(objectname) %(*objectname)', 'refs/tags']))
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [tag, object, peeled] = line.split(' ');
        return { tag: tag!, commit: peeled || object! };
      }),
  );
}

export function originUrl(dir: string): Promise<string | undefined> {
  return askLocal(dir, undefined, async (g) => (await g.raw(['config', '--get', 'remote.origin.url'])).trim() || undefined);
}
