import { spawn } from 'node:child_process';
import os from 'node:os';
import type { Logger } from '../core/log.js';
import { onPath } from '../core/binaries.js';

/**
 * Debian packages the project installs for itself when it runs as root where apt-get exists (a fresh CI machine):
 * Chromium for the browser tests (runtime/chromium.ts), PostgreSQL with pgvector's build needs for the pgvector tests
 * (test/support/pgvector-postgres.ts).
 */
const firstLine = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0]!;

/** Runs a command with its output in the log (apt takes a while; silence would look like a hang). */
export function loud(log: Logger, command: string, args: string[], o: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: o.cwd, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-2000);
      for (const line of chunk.toString().split('\n')) if (line.trim()) log.debug(line.trim());
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${tail.trim().split('\n').at(-1)}`))));
  });
}

/** Why apt-get cannot install here, or null when it can. */
export async function aptUnavailable(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  if (os.userInfo().uid !== 0) return 'not root, so it cannot be installed with apt-get';
  return (await onPath('apt-get', env)) ? null : 'apt-get is not available';
}

/** Installs in this process run one after another: apt-get holds dpkg's lock, and a second one would fail on it. */
let queue: Promise<unknown> = Promise.resolve();

/** `apt-get install -y --no-install-recommends <packages>`, after `apt-get update` when the first try fails. */
export function aptInstall(log: Logger, packages: string[]): Promise<void> {
  const next = queue.then(() => install(log, packages));
  queue = next.catch(() => undefined);
  return next;
}

async function install(log: Logger, packages: string[]): Promise<void> {
  const args = ['install', '-y', '--no-install-recommends', ...packages];
  log.info(`installing ${packages.join(', ')} with apt-get (a few minutes the first time)`);
  try {
    await loud(log, 'apt-get', args);
  } catch (err) {
    // A fresh container has no package lists yet.
    log.info('apt-get install failed; running apt-get update and trying again', { error: firstLine(err) });
    await loud(log, 'apt-get', ['update']);
    await loud(log, 'apt-get', args);
  }
}
