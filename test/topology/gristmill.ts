import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnManaged, stopManaged } from '../../runtime/processes.js';
import { freePort } from '../../fakes/ports.js';

/**
 * One Gristmill process of the topology, started as compose's services start them: `npm run api` (the API alone,
 * as the `app` service would be with its workers moved out) or `npm run worker -- --queues <queue>` (the `worker`
 * service). Each writes its output to `<logDir>/<name>.log`; a test kills it (SIGKILL) and starts it again.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

export interface GristmillProcess {
  name: string;
  /** The API's own URL (APIs only). */
  url: string | undefined;
  child: ChildProcess;
  output(): string;
  /** SIGKILL, as a crash or the OOM killer would: no shutdown, no last heartbeat. */
  kill(): Promise<void>;
  /** SIGTERM and the ordered shutdown. */
  stop(): Promise<void>;
  /** Starts a new process in this one's place (same port, same queue). */
  restart(): Promise<void>;
}

export async function startGristmill(
  o: { name: string; role: 'api' | 'worker'; queue?: string; env: Record<string, string>; logDir: string },
): Promise<GristmillProcess> {
  const port = o.role === 'api' ? await freePort() : undefined;
  const url = port ? `http://127.0.0.1:${port}` : undefined;
  const args = o.role === 'api' ? ['bin/api.ts'] : ['bin/worker.ts', '--queues', o.queue!];
  const self: GristmillProcess = {
    name: o.name,
    url,
    child: undefined as unknown as ChildProcess,
    output: () => '',
    kill: async () => {
      const c = self.child;
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill('SIGKILL');
      await exited;
    },
    stop: () => stopManaged(self.child, 30_000),
    restart: async () => {
      await self.kill();
      await spawn();
    },
  };

  const spawn = async () => {
    const child = spawnManaged(process.execPath, ['--import', 'tsx', ...args], {
      cwd: root,
      env: { ...process.env, ...o.env, ...(port && { PORT: String(port) }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const log = createWriteStream(path.join(o.logDir, `${o.name}.log`), { flags: 'a' });
    const keep = (b: Buffer) => {
      output = (output + b.toString('utf8')).slice(-200_000);
      log.write(b);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.once('exit', () => log.end());
    self.child = child;
    self.output = () => output;
    const ready = o.role === 'api' ? 'API listening' : 'workers polling';
    const deadline = Date.now() + 180_000;
    while (!output.includes(ready)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${o.name} did not start:\n${output.slice(-5000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await spawn();
  return self;
}
