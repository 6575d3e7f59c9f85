import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from '../core/log.js';
import { isExecutable, onPath, toolNotFound } from '../core/binaries.js';
import { aptInstall, aptUnavailable } from './apt.js';

/**
 * Chromium for the browser tests (test/web). Like ffmpeg and yt-dlp (core/tools.ts), nothing has to be installed
 * by hand: CHROMIUM_PATH -> `chromium` / `chromium-browser` on PATH -> /usr/bin/chromium -> when running as root
 * with apt-get, `apt-get install -y --no-install-recommends chromium` (after `apt-get update` when the first try
 * fails). Playwright's own browser downloads are never used: Debian's chromium is driven by playwright-core.
 */
const run = promisify(execFile);

export interface Chromium {
  path: string;
  version: string;
  /** Where it came from, for logs and errors. */
  source: string;
}

export interface FindChromiumOptions {
  /** CHROMIUM_PATH. */
  explicit?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Install it with apt-get when missing and allowed (default true). */
  install?: boolean;
}

const SYSTEM_PATH = '/usr/bin/chromium';
const firstLine = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0]!;

async function probe(path: string, source: string): Promise<Chromium> {
  const { stdout } = await run(path, ['--version'], { timeout: 30_000 });
  return { path, source, version: stdout.trim().split('\n')[0]! };
}

/** Finds Chromium (see the order above), installing it when allowed; fails with one message that lists every way. */
export async function findChromium(log: Logger, o: FindChromiumOptions = {}): Promise<Chromium> {
  const env = o.env ?? process.env;
  if (o.explicit) {
    if (!(await isExecutable(o.explicit))) throw new Error(`CHROMIUM_PATH points at ${o.explicit}, which is not an executable file`);
    return probe(o.explicit, 'CHROMIUM_PATH');
  }
  const failures: string[] = [];
  const candidates = async () => [
    ...((await Promise.all(['chromium', 'chromium-browser'].map((n) => onPath(n, env)))).filter((p): p is string => !!p)),
    SYSTEM_PATH,
  ];
  const tryAll = async (): Promise<Chromium | undefined> => {
    for (const candidate of new Set(await candidates())) {
      if (!(await isExecutable(candidate))) continue;
      try {
        return await probe(candidate, candidate === SYSTEM_PATH ? SYSTEM_PATH : 'PATH');
      } catch (err) {
        failures.push(`${candidate}: ${firstLine(err)}`);
      }
    }
    return undefined;
  };
  const found = await tryAll();
  if (found) return found;

  const unavailable = await aptUnavailable(env);
  if (o.install !== false && !unavailable) {
    try {
      await aptInstall(log, ['chromium']);
      const installed = await tryAll();
      if (installed) return { ...installed, source: 'apt-get' };
      failures.push('apt-get installed chromium but no executable was found');
    } catch (err) {
      failures.push(`apt-get: ${firstLine(err)}`);
    }
  } else if (o.install !== false && unavailable) {
    failures.push(unavailable);
  }
  throw toolNotFound('Chromium was not found', failures, [
    "install it: apt-get install chromium (Debian), or your distribution's chromium package, so that it is on PATH",
    'run `npm run setup:browser` as root on Debian or Ubuntu, which does that',
    'set CHROMIUM_PATH to a Chromium or Chrome binary',
  ]);
}
