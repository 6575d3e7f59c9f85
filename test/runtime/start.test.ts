import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.js';
import { freePort } from '../../fakes/ports.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let dataDir: string;
let env: NodeJS.ProcessEnv;
let ports: { api: number; pg: number; temporal: number; ui: number };

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-start-'));
  fs.chmodSync(dataDir, 0o755);
  const [api, pgPort, temporal, ui] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  ports = { api, pg: pgPort, temporal, ui };
  // A newcomer's environment: nothing Gristmill-specific set but ports and where the data goes.
  env = { ...process.env };
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'API_KEY', 'TASK_QUEUE_PREFIX']) delete env[k];
  Object.assign(env, {
    DATA_DIR: dataDir,
    PORT: String(api),
    EMBEDDED_POSTGRES_PORT: String(pgPort),
    TEMPORAL_PORT: String(temporal),
    TEMPORAL_UI_PORT: String(ui),
    LOG_LEVEL: 'warn',
  });
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

/**
 * What `npm start` runs, in its own process group as a terminal runs it. (npm itself is left out: on Ctrl-C it dies
 * of the signal whatever its child does, so its exit code says nothing about ours.)
 */
const START = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start.split(' ') as string[];
function start(): { child: ChildProcess; output: () => string } {
  expect(START.slice(0, 3)).toEqual(['node', '--import', 'tsx']);
  const child = spawn(process.execPath, START.slice(1), {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  return { child, output: () => out };
}

async function waitHealthy(output: () => string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${ports.api}/healthz`).catch(() => undefined);
    if (res?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`npm start did not become healthy:\n${output()}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Ctrl-C: SIGINT to the foreground process group; resolves with the exit code. */
async function ctrlC(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  process.kill(-child.pid!, 'SIGINT');
  return exited;
}

function strays(): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'])
    .toString()
    .split('\n')
    .filter((l) => l.includes(dataDir));
}

const databaseUrl = () =>
  `postgres://gristmill:${encodeURIComponent(fs.readFileSync(path.join(dataDir, 'postgres.secret'), 'utf8').trim())}@127.0.0.1:${ports.pg}/gristmill`;

describe('npm start', () => {
  it('brings up PostgreSQL, Temporal with its UI, the API and all workers; Ctrl-C leaves nothing behind', async () => {
    const run = start();
    await waitHealthy(run.output);

    const deep = await fetch(`http://127.0.0.1:${ports.api}/healthz?deep=1`);
    const body = await json(deep);
    expect(deep.status, JSON.stringify(body)).toBe(200);
    expect(Object.values<{ ok: boolean }>(body.queues).every((q) => q.ok)).toBe(true);
    expect((await fetch(`http://127.0.0.1:${ports.ui}/`)).status).toBe(200);

    // Something to find after a restart.
    const db = new pg.Client({ connectionString: databaseUrl() });
    await db.connect();
    await db.query('create table restart_marker (value int); insert into restart_marker values (42)');
    await db.end();

    expect(await ctrlC(run.child)).toBe(0);
    expect(strays()).toEqual([]);
  });

  it('finds the data of the previous run', async () => {
    const run = start();
    try {
      await waitHealthy(run.output);
      const db = new pg.Client({ connectionString: databaseUrl() });
      await db.connect();
      expect((await db.query('select value from restart_marker')).rows).toEqual([{ value: 42 }]);
      await db.end();

      // Temporal kept its history too: the previous run's health probes are still listed.
      const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
      const client = new Client({ connection });
      const probes: string[] = [];
      for await (const wf of client.workflow.list({ query: "WorkflowType = 'pingWorkflow'" })) probes.push(wf.workflowId);
      await connection.close();
      expect(probes.length).toBeGreaterThanOrEqual(3);
    } finally {
      expect(await ctrlC(run.child)).toBe(0);
    }
    expect(strays()).toEqual([]);
  });
});
