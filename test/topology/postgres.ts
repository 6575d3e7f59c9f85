import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { onPath } from '../../core/binaries.js';
import { createLogger } from '../../core/log.js';
import { provisionPgvector, startPgvectorPostgres } from '../support/pgvector-postgres.js';

/**
 * The compose file's `postgres` service on one machine: a PostgreSQL with pgvector (as compose's pgvector image; the
 * server the pgvector tests use, test/support/pgvector-postgres.ts) whose superuser is `postgres`, initialised by the
 * compose file's own init script, deploy/postgres-init/10-roles-and-databases.sh (roles gristmill and temporal,
 * databases gristmill, temporal, temporal_visibility, the vector extension), run with psql.
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
  const server = await startPgvectorPostgres(await provisionPgvector(createLogger('warn')), dir, {
    port,
    superuser: 'postgres',
    password: passwords.postgres,
    settings: { max_connections: '300' },
    createDatabase: false,
  });
  const start = () => server.start();
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
