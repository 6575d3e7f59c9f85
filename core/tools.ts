import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from './log.js';
import { gristmillCacheDir, isExecutable, onPath, toolNotFound } from './binaries.js';

/**
 * The media tools transcription runs: ffmpeg and yt-dlp. Like the Temporal CLI (runtime/temporal.ts), nothing has
 * to be installed by hand: each is looked up in a fixed order and, failing that, obtained into a user-level cache.
 *
 * ffmpeg:  FFMPEG_PATH -> `ffmpeg` on PATH -> the binary inside the `@ffmpeg-installer/ffmpeg` npm package.
 * yt-dlp:  YTDLP_PATH -> `yt-dlp` on PATH -> the cache `~/.cache/gristmill/yt-dlp/<version>` (run with python3)
 *          -> `python3 -m pip install --target <cache> yt-dlp==<version>` from PyPI.
 */
const run = promisify(execFile);

/** The pinned yt-dlp release installed into the cache when none is on PATH. */
export const YTDLP_VERSION = '2026.10.26';
/** yt-dlp releases of 2025 and later need Python 3.10. */
const MIN_PYTHON: [number, number] = [3, 10];

/** How to run a tool: `command ...args <tool args>` with `env` added to the environment. */
export interface Tool {
  name: 'ffmpeg' | 'yt-dlp';
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Where it came from, for logs and errors. */
  source: string;
  version: string;
}

/** Runs `tool <args>` and returns the first line it prints: proves the tool starts, and names its version. */
async function probe(tool: Omit<Tool, 'version'>, versionArgs: string[]): Promise<Tool> {
  const { stdout, stderr } = await run(tool.command, [...tool.args, ...versionArgs], {
    env: { ...process.env, ...tool.env },
    timeout: 30_000,
  });
  const version = (stdout || stderr).split('\n')[0]!.trim();
  return { ...tool, version };
}

const firstLine = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0]!;

export interface FindOptions {
  /** FFMPEG_PATH or YTDLP_PATH. */
  explicit?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** yt-dlp only: install into the cache when missing (default true). */
  install?: boolean;
}

/** Finds ffmpeg (see the order above); fails with one message that lists every way to provide it. */
export async function findFfmpeg(log: Logger, o: FindOptions = {}): Promise<Tool> {
  const env = o.env ?? process.env;
  if (o.explicit) {
    if (!(await isExecutable(o.explicit))) throw new Error(`FFMPEG_PATH points at ${o.explicit}, which is not an executable file`);
    return probe({ name: 'ffmpeg', command: o.explicit, args: [], env: {}, source: 'FFMPEG_PATH' }, ['-hide_banner', '-version']);
  }
  const failures: string[] = [];
  const fromPath = await onPath('ffmpeg', env);
  if (fromPath) {
    try {
      return await probe({ name: 'ffmpeg', command: fromPath, args: [], env: {}, source: 'PATH' }, ['-hide_banner', '-version']);
    } catch (err) {
      failures.push(`${fromPath}: ${firstLine(err)}`);
    }
  }
  try {
    const require = createRequire(import.meta.url);
    const installer = require('@ffmpeg-installer/ffmpeg') as { path: string };
    if (!(await isExecutable(installer.path))) throw new Error(`${installer.path} is not executable`);
    const tool = await probe({ name: 'ffmpeg', command: installer.path, args: [], env: {}, source: '@ffmpeg-installer/ffmpeg' }, ['-hide_banner', '-version']);
    log.debug('using the ffmpeg of the @ffmpeg-installer package', { path: installer.path });
    return tool;
  } catch (err) {
    failures.push(`@ffmpeg-installer/ffmpeg: ${firstLine(err)}`);
  }
  throw toolNotFound('ffmpeg was not found', failures, [
    'install ffmpeg (apt install ffmpeg, brew install ffmpeg) so that it is on PATH',
    'set FFMPEG_PATH to an ffmpeg binary',
    'run `npm ci` on a platform @ffmpeg-installer/ffmpeg ships a binary for',
  ]);
}

/** `python3` on PATH, if it is recent enough for yt-dlp. */
async function findPython(env: NodeJS.ProcessEnv): Promise<string> {
  const python = (await onPath('python3', env)) ?? (await onPath('python', env));
  if (!python) throw new Error('python3 is not on PATH');
  const { stdout } = await run(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { timeout: 30_000 });
  const [major, minor] = stdout.trim().split('.').map(Number) as [number, number];
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    throw new Error(`${python} is Python ${stdout.trim()}; yt-dlp ${YTDLP_VERSION} needs ${MIN_PYTHON.join('.')} or later`);
  }
  return python;
}

export function ytDlpCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(gristmillCacheDir(env), 'yt-dlp', YTDLP_VERSION);
}

const cachedYtDlp = (python: string, dir: string): Omit<Tool, 'version'> => ({
  name: 'yt-dlp',
  command: python,
  args: ['-m', 'yt_dlp'],
  env: { PYTHONPATH: dir, PYTHONDONTWRITEBYTECODE: '1' },
  source: dir,
});

/** `pip install --target` into a fresh folder beside the cache entry, then one rename: never half an install. */
async function installYtDlp(python: string, dir: string, log: Logger): Promise<void> {
  await fs.mkdir(path.dirname(dir), { recursive: true });
  const work = await fs.mkdtemp(path.join(path.dirname(dir), '.install-'));
  try {
    log.info(`installing yt-dlp ${YTDLP_VERSION} from PyPI into ${dir}`);
    await run(
      python,
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', '--no-warn-script-location', '--target', work, `yt-dlp==${YTDLP_VERSION}`],
      { timeout: 10 * 60_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, PIP_NO_CACHE_DIR: '1' } },
    );
    try {
      await fs.rename(work, dir);
    } catch (err) {
      // Another process finished first: its copy is as good as ours.
      if (!(await fs.stat(path.join(dir, 'yt_dlp')).catch(() => undefined))) throw err;
    }
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** Finds yt-dlp (see the order above); fails with one message that lists every way to provide it. */
export async function findYtDlp(log: Logger, o: FindOptions = {}): Promise<Tool> {
  const env = o.env ?? process.env;
  if (o.explicit) {
    if (!(await isExecutable(o.explicit))) throw new Error(`YTDLP_PATH points at ${o.explicit}, which is not an executable file`);
    return probe({ name: 'yt-dlp', command: o.explicit, args: [], env: {}, source: 'YTDLP_PATH' }, ['--version']);
  }
  const failures: string[] = [];
  const fromPath = await onPath('yt-dlp', env);
  if (fromPath) {
    try {
      return await probe({ name: 'yt-dlp', command: fromPath, args: [], env: {}, source: 'PATH' }, ['--version']);
    } catch (err) {
      failures.push(`${fromPath}: ${firstLine(err)}`);
    }
  }
  const dir = ytDlpCacheDir(env);
  try {
    const python = await findPython(env);
    if (!(await fs.stat(path.join(dir, 'yt_dlp')).catch(() => undefined))) {
      if (o.install === false) throw new Error(`${dir} is empty`);
      await installYtDlp(python, dir, log);
    }
    return await probe(cachedYtDlp(python, dir), ['--version']);
  } catch (err) {
    failures.push(`cache: ${firstLine(err)}`);
  }
  throw toolNotFound('yt-dlp was not found and could not be installed', failures, [
    'install yt-dlp (pipx install yt-dlp, brew install yt-dlp, apt install yt-dlp) so that it is on PATH',
    'set YTDLP_PATH to a yt-dlp executable',
    `make python3 (3.10 or later) with pip available, so yt-dlp ${YTDLP_VERSION} can be installed into ${dir}`,
  ]);
}

/**
 * One lookup per process and tool (the result is cached; a failure is not, so fixing the setup needs no restart).
 */
export class Tools {
  private ffmpeg: Promise<Tool> | undefined;
  private ytdlp: Promise<Tool> | undefined;

  constructor(
    private readonly log: Logger,
    private readonly paths: { ffmpegPath?: string | undefined; ytdlpPath?: string | undefined } = {},
  ) {}

  getFfmpeg(): Promise<Tool> {
    this.ffmpeg ??= findFfmpeg(this.log, { explicit: this.paths.ffmpegPath }).catch((err) => {
      this.ffmpeg = undefined;
      throw err;
    });
    return this.ffmpeg;
  }

  getYtDlp(): Promise<Tool> {
    this.ytdlp ??= findYtDlp(this.log, { explicit: this.paths.ytdlpPath }).catch((err) => {
      this.ytdlp = undefined;
      throw err;
    });
    return this.ytdlp;
  }
}
