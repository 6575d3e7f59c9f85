import { simpleGit, type SimpleGit } from 'simple-git';
import { redact } from '../core/redact.js';

/**
 * Git operations of the indexer. A git-host token goes to git through environment config
 * (GIT_CONFIG_KEY_0=http.extraHeader), never on a command line or in a remote URL, so `ps` and `.git/config`
 * never show it; every git error is redacted before it goes anywhere.
 */
export class GitError extends Error {
  constructor(message: string, token?: string | null) {
    super(redact(message, [token]));
    this.name = 'GitError';
  }
}

function env(token?: string | null): Record<string, string> {
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    GIT_TERMINAL_PROMPT: '0', // fail at once instead of waiting for a password nobody will type
    GIT_CONFIG_NOSYSTEM: '1',
  };
  if (!token) return base;
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  return { ...base, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
}

function git(baseDir: string | undefined, token?: string | null, signal?: AbortSignal, onProgress?: (what: string) => void): SimpleGit {
  return simpleGit({
    ...(baseDir && { baseDir }),
    timeout: { block: 5 * 60_000 },
    ...(signal && { abort: signal }),
    // git's progress lines (objects received, files checked out): proof that a long clone is moving.
    ...(onProgress && { progress: ({ stage, progress }: { stage: string; progress: number }) => onProgress(`${stage} ${progress}%`) }),
    // The environment is ours, not user input: the GIT_CONFIG_* variables only carry the auth header.
    // URLs and tags are user input and stay under simple-git's other guards (no ext::, no --upload-pack).
    allowEnvironment: ['GIT_TERMINAL_PROMPT', 'GIT_CONFIG_NOSYSTEM', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0'],
    unsafe: { allowUnsafeConfigEnvCount: true },
  }).env(env(token));
}

async function run<T>(token: string | null | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new GitError((err as Error).message.trim().split('\n').slice(0, 5).join(' '), token);
  }
}

/** Tags of a remote, tag -> commit (peeled for annotated tags). */
export async function remoteTags(url: string, token?: string | null, signal?: AbortSignal): Promise<Map<string, string>> {
  const out = await run(token, () => git(undefined, token, signal).raw(['ls-remote', '--tags', url]));
  const tags = new Map<string, string>();
  for (const line of out.split('\n')) {
    const m = /^([0-9a-f]{40})\s+refs\/tags\/(.+?)(\^\{\})?$/.exec(line.trim());
    if (m && (m[3] || !tags.has(m[2]!))) tags.set(m[2]!, m[1]!);
  }
  return tags;
}

/** Checks that the remote answers (and the token, if any, is accepted). */
export async function probeRemote(url: string, token?: string | null): Promise<void> {
  await run(token, () => git(undefined, token).raw(['ls-remote', '--heads', url]));
}

/** A shallow clone at a branch or tag (default branch when neither), without the token persisting anywhere. */
export async function shallowClone(
  url: string,
  target: string,
  opts: { ref?: string | null; token?: string | null; signal?: AbortSignal; onProgress?: (what: string) => void },
): Promise<void> {
  const args = ['--depth', '1', '--single-branch', '--no-tags', ...(opts.ref ? ['--branch', opts.ref] : [])];
  await run(opts.token, () => git(undefined, opts.token, opts.signal, opts.onProgress).clone(url, target, args));
}

/**
 * A local repository's content at `tag`, in `target`, without touching the user's working tree or index:
 * a `--shared` clone borrows the objects and checks the tag out in the copy.
 */
export async function checkoutLocalTag(repo: string, tag: string, target: string, signal?: AbortSignal, onProgress?: (what: string) => void): Promise<void> {
  await run(null, () => git(undefined, null, signal, onProgress).clone(repo, target, ['--shared', '--no-checkout', '--quiet']));
  await run(null, () => git(target, null, signal, onProgress).raw(['checkout', '--quiet', '--detach', `refs/tags/${tag}`]));
}

export async function headCommit(dir: string): Promise<string | null> {
  try {
    return (await git(dir).revparse(['HEAD'])).trim() || null;
  } catch {
    return null;
  }
}

export async function isRepository(dir: string): Promise<boolean> {
  try {
    return (await git(dir).revparse(['--show-toplevel'])).trim().length > 0;
  } catch {
    return false;
  }
}

/** Tags of a local repository with their commits; empty when it is not a repository or git fails. */
export async function localTags(dir: string): Promise<{ tag: string; commit: string }[]> {
  try {
    const out = await git(dir).raw(['for-each-ref', '--format=%(refname:strip=2) %(objectname) %(*objectname)', 'refs/tags']);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [tag, object, peeled] = line.split(' ');
        return { tag: tag!, commit: peeled || object! };
      });
  } catch {
    return [];
  }
}

export async function originUrl(dir: string): Promise<string | undefined> {
  try {
    const url = (await git(dir).raw(['config', '--get', 'remote.origin.url'])).trim();
    return url || undefined;
  } catch {
    return undefined;
  }
}
