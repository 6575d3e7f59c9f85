import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Logger } from '../core/log.js';
import { freePort } from '../fakes/ports.js';
import { loadConfig } from '../runtime/config.js';
import { printed, spawnManaged, stopManaged } from '../runtime/processes.js';
import { provisionTemporal } from '../runtime/temporal.js';
import { imageEnvironment } from '../test/support/compose.js';

/**
 * An API replica as the image runs it (`node dist/bin/api.js`, the compiled build, with the image's environment,
 * attached to PostgreSQL and a Temporal server), for the scale benchmark to measure what one replica holds: its
 * resident memory, read from /proc, after it has answered queries over every library. The build is made first
 * (`npm run build`).
 */
const root = fileURLToPath(new URL('..', import.meta.url));

export interface Replica {
  url: string;
  pid: number;
  /** Resident and peak resident memory (VmRSS, VmHWM), in bytes. */
  memory(): Promise<{ rss: number; peak: number }>;
  stop(): Promise<void>;
}

export async function startReplica(o: { databaseUrl: string; dataDir: string; env: Record<string, string>; log: Logger }): Promise<Replica> {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: root, maxBuffer: 64 << 20 });
  const temporal = await provisionTemporal(loadConfig({ DATA_DIR: o.dataDir, DATABASE_URL: o.databaseUrl, LOG_LEVEL: 'warn' }), o.log);
  const port = await freePort();
  const child = spawnManaged(process.execPath, [path.join(root, 'dist/bin/api.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(await imageEnvironment()),
      DATABASE_URL: o.databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: o.dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = printed(child, { last: 40 });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopManaged(child, 20_000);
    await temporal.stop();
  };
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the replica exited: ${output()}`);
      if (Date.now() > deadline) throw new Error(`the replica did not answer /healthz within 120 s: ${output()}`);
      if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    pid: child.pid!,
    memory: async () => {
      const status = await fs.readFile(`/proc/${child.pid}/status`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
      return { rss: kb('VmRSS'), peak: kb('VmHWM') };
    },
    stop,
  };
}
