import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { gristmillCacheDir, goBuildCached, isExecutable, onPath, toolNotFound } from '../core/binaries.js';
import { printed, spawnManaged, stopManaged } from './processes.js';

const run = promisify(execFile);

/** The pinned Temporal CLI (server 1.29.1, UI 2.42.1). Later versions cannot be `go install`ed. */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const GO_MODULE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;

export interface TemporalEndpoint {
  address: string;
  namespace: string;
  /** The web UI, when we run the dev server. */
  uiUrl: string | undefined;
  stop(): Promise<void>;
}

/** A user-level cache outside the checkout, so fresh clones on the same machine (as CI uses) reuse the binary. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(gristmillCacheDir(env), 'temporal', `v${TEMPORAL_CLI_VERSION}`);
}

/** Temporal's CDN, or TEMPORAL_CLI_DOWNLOAD_URL (a mirror serving the same .tar.gz archive). */
function cdnUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.TEMPORAL_CLI_DOWNLOAD_URL) return env.TEMPORAL_CLI_DOWNLOAD_URL;
  const platform = ({ linux: 'linux', darwin: 'darwin' } as Record<string, string>)[process.platform];
  const arch = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch];
  if (!platform || !arch) return undefined;
  return `https://temporal.download/cli/archive/v${TEMPORAL_CLI_VERSION}?platform=${platform}&arch=${arch}`;
}

async function downloadFromCdn(target: string, log: Logger, env: NodeJS.ProcessEnv): Promise<void> {
  const url = cdnUrl(env);
  if (!url) throw new Error(`no prebuilt Temporal CLI for ${process.platform}/${process.arch}`);
  log.info('downloading the Temporal CLI', { url });
  const res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  if (!res.ok || !res.body) throw new Error(`download failed: HTTP ${res.status}`);
  const work = await fs.mkdtemp(path.join(path.dirname(target), '.download-'));
  try {
    const archive = path.join(work, 'temporal.tar.gz');
    await pipeline(Readable.fromWeb(res.body as never), createWriteStream(archive));
    await run('tar', ['-xzf', archive, '-C', work, 'temporal']);
    await fs.chmod(path.join(work, 'temporal'), 0o755);
    await fs.rename(path.join(work, 'temporal'), target); // atomic: a concurrent start never sees half a file
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** `go install` of the pinned CLI into the cache folder, through the one way the project builds Go programs. */
function goInstall(log: Logger, env: NodeJS.ProcessEnv): Promise<string> {
  const build = { what: `the Temporal CLI v${TEMPORAL_CLI_VERSION}`, module: 'github.com/temporalio/cli', version: `v${TEMPORAL_CLI_VERSION}`, commands: { temporal: 'cmd/temporal' } };
  return goBuildCached(cacheDir(env), build, log, env);
}

/**
 * Finds the Temporal CLI: TEMPORAL_CLI, `temporal` on PATH, the user cache; else obtains it into the cache from
 * Temporal's CDN or, where Go is installed, by `go install`. Fails with one message naming every way to get it.
 */
export async function findTemporalCli(
  log: Logger,
  opts: { explicit?: string | undefined; env?: NodeJS.ProcessEnv; download?: boolean } = {},
): Promise<string> {
  const env = opts.env ?? process.env;
  if (opts.explicit) {
    if (await isExecutable(opts.explicit)) return opts.explicit;
    throw new Error(`TEMPORAL_CLI points at ${opts.explicit}, which is not an executable file`);
  }
  const fromPath = await onPath('temporal', env);
  if (fromPath) return fromPath;
  const cached = path.join(cacheDir(env), 'temporal');
  if (await isExecutable(cached)) return cached;

  const failures: string[] = [];
  if (opts.download !== false) {
    await fs.mkdir(path.dirname(cached), { recursive: true });
    for (const [how, obtain] of [
      ["Temporal's CDN", () => downloadFromCdn(cached, log, env)],
      ['go install', () => goInstall(log, env)],
    ] as const) {
      try {
        await obtain();
        if (await isExecutable(cached)) return cached;
      } catch (err) {
        failures.push(`${how}: ${(err as Error).message.split('\n')[0]}`);
        log.warn(`could not get the Temporal CLI from ${how}`, { error: (err as Error).message.split('\n')[0] });
      }
    }
  }
  throw toolNotFound('The Temporal CLI was not found and could not be obtained', failures, [
    'set TEMPORAL_ADDRESS to a running Temporal server (host:port)',
    'set TEMPORAL_CLI to the path of a `temporal` binary',
    'put `temporal` on your PATH (brew install temporal; or https://temporal.download)',
    `install Go and run: GOBIN=${path.dirname(cached)} go install ${GO_MODULE}`,
  ]);
}

/** Polls until the frontend answers, or the server process exits, or the deadline passes. */
export async function waitForTemporal(
  address: string,
  opts: { timeoutMs?: number; exited?: () => string | undefined } = {},
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let lastError = '';
  while (Date.now() < deadline) {
    const gone = opts.exited?.();
    if (gone !== undefined) throw new Error(gone);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = (err as Error).message;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`Temporal at ${address} did not answer in time: ${lastError}`);
}

export interface DevServerOptions {
  cli: string;
  stateDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  headless?: boolean;
  log: Logger;
}

/** The dev server's command line (after the CLI's path): its state in one SQLite file under `stateDir`. */
export function devServerArgs(o: Omit<DevServerOptions, 'cli' | 'log'>): string[] {
  return [
    'server', 'start-dev',
    '--db-filename', path.join(o.stateDir, 'temporal.db'),
    // Write-ahead log, synced at checkpoints rather than at every commit: each workflow task's commit had waited on
    // the disk twice (the default rollback journal, synchronous FULL), about 10 ms of every step's round trip here
    // (bench/README.md, Index). A commit is in the file before the server answers, so a killed server (or a killed
    // machine's processes) loses nothing; only an operating system crash or power cut can take back the last commits,
    // never leaving the file corrupt (docs/deploy.md, "Without Docker").
    '--sqlite-pragma', 'journal_mode=WAL',
    '--sqlite-pragma', 'synchronous=NORMAL',
    '--ip', '127.0.0.1',
    '--port', String(o.port),
    '--log-level', 'warn',
    // Eager activity dispatch, off by default in server 1.29 (on by default from 1.32): an activity a workflow task
    // schedules on its own queue goes back to that worker with the task's completion, not through the queue. It saved
    // 5 to 10 ms per activity, about 35 ms of a 0.5 s no-change re-index (bench/README.md, Index). The production
    // server gets the same from deploy/temporal/dynamicconfig/production-sql.yaml.
    '--dynamic-config-value', 'system.enableActivityEagerExecution=true',
    ...(o.headless ? ['--headless'] : ['--ui-port', String(o.uiPort)]),
    ...(o.namespace !== 'default' ? ['--namespace', o.namespace] : []),
  ];
}

/** Runs `temporal server start-dev` with its SQLite state under `stateDir`, so workflows survive restarts. */
export async function startDevServer(o: DevServerOptions): Promise<TemporalEndpoint> {
  await fs.mkdir(o.stateDir, { recursive: true });
  const args = devServerArgs(o);
  const child = spawnManaged(o.cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = printed(child);
  child.stderr?.on('data', (b: Buffer) => o.log.debug(b.toString('utf8').trim()));
  const address = `127.0.0.1:${o.port}`;
  try {
    await waitForTemporal(address, {
      exited: () => {
        if (child.exitCode === null && child.signalCode === null) return undefined;
        const out = output();
        const hint = /address already in use/i.test(out)
          ? ` A port it needs is in use (${o.port}, ${o.headless ? '' : `the UI's ${o.uiPort}, `}or one it picked for itself, which another process took first): start it again, or set TEMPORAL_ADDRESS to use the server already there, or TEMPORAL_PORT / TEMPORAL_UI_PORT to pick others.`
          : '';
        return `The Temporal dev server exited (code ${child.exitCode ?? child.signalCode}).${hint}\n${out}`;
      },
    });
  } catch (err) {
    await stopManaged(child, 2000);
    throw err;
  }
  const uiUrl = o.headless ? undefined : `http://localhost:${o.uiPort}`;
  o.log.info('Temporal dev server ready', { address, ui: uiUrl ?? 'off', state: o.stateDir });
  return { address, namespace: o.namespace, uiUrl, stop: () => stopManaged(child) };
}

/** TEMPORAL_ADDRESS when set; otherwise the dev server, with the CLI found or obtained. */
export async function provisionTemporal(config: Config, log: Logger): Promise<TemporalEndpoint> {
  if (config.temporalAddress) {
    await waitForTemporal(config.temporalAddress, { timeoutMs: 30_000 });
    return { address: config.temporalAddress, namespace: config.temporalNamespace, uiUrl: undefined, stop: async () => {} };
  }
  const cli = await findTemporalCli(log, { explicit: config.temporalCli });
  return startDevServer({
    cli,
    stateDir: path.join(config.dataDir, 'temporal'),
    port: config.temporalPort,
    uiPort: config.temporalUiPort,
    namespace: config.temporalNamespace,
    log,
  });
}
