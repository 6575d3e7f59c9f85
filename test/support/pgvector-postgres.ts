import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { copyGoModule, isExecutable, onPath } from '../../core/binaries.js';
import type { Logger } from '../../core/log.js';
import { aptInstall, aptUnavailable, loud } from '../../runtime/apt.js';
import { ensureDatabase, type PostgresEndpoint } from '../../runtime/postgres.js';

/**
 * A PostgreSQL server with the pgvector extension, for the tests of SEARCH_VECTORS=pgvector: the embedded PostgreSQL
 * ships no headers to build extensions against. Debian's server (`postgresql`, and `postgresql-server-dev-<major>`
 * to build with) and pgvector built from its tagged source, which Go's module download fetches (the Go module proxy
 * serves any public repository's tags, so a GOPROXY mirror applies), then `make install`ed into that server. Set up
 * once per machine, as root with apt-get like Chromium (runtime/chromium.ts); each test run has its own cluster in a
 * temporary folder.
 */
const run = promisify(execFile);
export const PGVECTOR_VERSION = 'v0.8.1';
const PGVECTOR_MODULE = 'github.com/pgvector/pgvector';
const USER = 'gristmill';

/** The newest Debian PostgreSQL server's pg_config, if one is installed. */
async function findPgConfig(): Promise<string | undefined> {
  const majors = await fs.readdir('/usr/lib/postgresql').catch(() => [] as string[]);
  for (const major of majors.filter((m) => /^\d+$/.test(m)).sort((a, b) => Number(b) - Number(a))) {
    const bin = path.join('/usr/lib/postgresql', major, 'bin');
    if ((await isExecutable(path.join(bin, 'postgres'))) && (await isExecutable(path.join(bin, 'pg_config')))) return path.join(bin, 'pg_config');
  }
  return undefined;
}

const pgConfig = async (bin: string, flag: string) => (await run(bin, [flag])).stdout.trim();
const exists = (file: string) => fs.access(file).then(() => true, () => false);

async function buildPgvector(pgConfigBin: string, log: Logger): Promise<void> {
  const go = await onPath('go');
  if (!go) throw new Error('Go is not installed: it fetches the pgvector source');
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'pgvector-build-'));
  try {
    await copyGoModule(go, PGVECTOR_MODULE, PGVECTOR_VERSION, work);
    log.info(`building pgvector ${PGVECTOR_VERSION} for ${pgConfigBin}`);
    await loud(log, 'make', [`PG_CONFIG=${pgConfigBin}`, 'OPTFLAGS=', '-j2'], { cwd: work });
    await loud(log, 'make', [`PG_CONFIG=${pgConfigBin}`, 'install'], { cwd: work });
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** Debian's PostgreSQL server with pgvector installed into it (see above); returns its binaries' folder. */
export async function provisionPgvector(log: Logger): Promise<string> {
  let bin = await findPgConfig();
  const unavailable = await aptUnavailable();
  if (!bin) {
    if (unavailable) throw new Error(`no Debian PostgreSQL server (/usr/lib/postgresql/<major>) and ${unavailable}`);
    await aptInstall(log, ['postgresql']);
    bin = await findPgConfig();
    if (!bin) throw new Error('apt-get installed postgresql but no server was found under /usr/lib/postgresql');
  }
  const [pkglib, share, serverIncludes] = await Promise.all(['--pkglibdir', '--sharedir', '--includedir-server'].map((f) => pgConfig(bin, f)));
  if ((await exists(path.join(pkglib!, 'vector.so'))) && (await exists(path.join(share!, 'extension', 'vector.control')))) return path.dirname(bin);
  if (!(await exists(path.join(serverIncludes!, 'postgres.h')))) {
    if (unavailable) throw new Error(`pgvector is not installed and cannot be built: no server headers, and ${unavailable}`);
    const major = (await pgConfig(bin, '--version')).match(/PostgreSQL (\d+)/)?.[1];
    await aptInstall(log, [`postgresql-server-dev-${major}`]);
  }
  await buildPgvector(bin, log);
  return path.dirname(bin);
}

export interface PgvectorCluster {
  port: number;
  /** The cluster's superuser (default `gristmill`, whose database the URL names). */
  superuser?: string;
  /** The superuser's password: connections then need it (SCRAM); without one they are trusted. */
  password?: string;
  /** Server settings (`-c` flags): the scale benchmark's memory, the topology's connections. */
  settings?: Record<string, string>;
  /** Create database `gristmill` (default true; the topology's init script creates it with its owner). */
  createDatabase?: boolean;
}

/**
 * Starts a cluster of the provisioned server in a folder of its own under `dir` (as user postgres when running as
 * root: PostgreSQL refuses root), listening on 127.0.0.1 only, and returns the URL of database `gristmill` as the
 * superuser; `start` starts it again after `stop` (a restart under load).
 */
export async function startPgvectorPostgres(bindir: string, dir: string, o: PgvectorCluster): Promise<PostgresEndpoint & { start(): Promise<void> }> {
  const cluster = path.join(dir, 'pgvector-cluster');
  const user = o.superuser ?? USER;
  await fs.mkdir(cluster, { recursive: true, mode: 0o700 });
  const asRoot = os.userInfo().uid === 0;
  const as = (command: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args));
  const auth = ['-A', 'trust'];
  if (o.password) {
    const pwfile = path.join(dir, 'pgvector-cluster.pw');
    await fs.writeFile(pwfile, o.password + '\n', { mode: 0o600 });
    if (asRoot) await run('chown', ['postgres:postgres', pwfile]);
    auth.splice(0, 2, '-A', 'scram-sha-256', `--pwfile=${pwfile}`);
  }
  if (asRoot) await run('chown', ['postgres:postgres', cluster]);
  await as(path.join(bindir, 'initdb'), ['-D', cluster, '-U', user, ...auth, '-E', 'UTF8', '--locale=C']);
  await fs.rm(path.join(dir, 'pgvector-cluster.pw'), { force: true });
  const flags = [`-p ${o.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`, ...Object.entries(o.settings ?? {}).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  const start = async () => {
    await as(path.join(bindir, 'pg_ctl'), ['-D', cluster, '-o', flags, '-l', path.join(cluster, 'server.log'), '-w', 'start']);
  };
  await start();
  const url = `postgres://${user}${o.password ? `:${encodeURIComponent(o.password)}` : ''}@127.0.0.1:${o.port}/gristmill`;
  if (o.createDatabase !== false) await ensureDatabase(url);
  return {
    url,
    start,
    stop: async () => {
      await as(path.join(bindir, 'pg_ctl'), ['-D', cluster, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
    },
  };
}
