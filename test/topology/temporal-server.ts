import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { gristmillCacheDir, goBuildCached, type GoBuild } from '../../core/binaries.js';
import type { Logger } from '../../core/log.js';
import { printed, spawnManaged, stopManaged } from '../../runtime/processes.js';
import { findTemporalCli, waitForTemporal } from '../../runtime/temporal.js';
import net from 'node:net';

/**
 * Temporal's real server, as docker-compose.yml runs it: the `temporalio/server` version the compose file pins,
 * built from its Go module into the user cache (the CLI's cache beside it, core/binaries.ts), its two PostgreSQL
 * databases set up by the compose file's own schema job, its namespace by the compose file's own namespace job.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** The version of `temporalio/server` in docker-compose.yml, e.g. `1.29.1`: the test runs what compose runs. */
export async function composeTemporalVersion(): Promise<string> {
  const compose = YAML.parse(await fs.readFile(path.join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { image?: string }> };
  const image = compose.services.temporal?.image ?? '';
  const version = /^temporalio\/server:(\d+\.\d+\.\d+)$/.exec(image)?.[1];
  if (!version) throw new Error(`docker-compose.yml's temporal service runs "${image}", not temporalio/server:<x.y.z>`);
  return version;
}

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
  /** The module's schema/ folder (what admin-tools ships as /etc/temporal/schema). */
  schemaRoot: string;
}

/** `temporal-server` and `temporal-sql-tool` of `version`, from the cache, built there the first time. */
export async function provisionTemporalServer(version: string, log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<TemporalServerBinaries> {
  const build: GoBuild = {
    what: `Temporal's server ${version}`,
    module: 'go.temporal.io/server',
    version: `v${version}`,
    commands: { 'temporal-server': 'cmd/server', 'temporal-sql-tool': 'cmd/tools/sql' },
    folders: ['schema'],
  };
  const dir = await goBuildCached(path.join(gristmillCacheDir(env), 'temporal-server', `v${version}`), build, log, env);
  return { server: path.join(dir, 'temporal-server'), sqlTool: path.join(dir, 'temporal-sql-tool'), schemaRoot: path.join(dir, 'schema') };
}

/** Runs one of deploy/temporal/scripts/ as its compose service would, with `/etc/temporal/schema` moved to ours. */
async function runDeployScript(name: string, env: Record<string, string>, o: { schemaRoot?: string; bin: string[] }): Promise<string> {
  let script = await fs.readFile(path.join(root, 'deploy', 'temporal', 'scripts', name), 'utf8');
  if (o.schemaRoot) {
    if (!script.includes('/etc/temporal/schema')) throw new Error(`${name} no longer reads /etc/temporal/schema`);
    script = script.replaceAll('/etc/temporal/schema', o.schemaRoot);
  }
  const { stdout, stderr } = await run('sh', ['-c', script, name], {
    env: { PATH: [...o.bin, process.env.PATH].join(path.delimiter), HOME: process.env.HOME ?? '/tmp', ...env },
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout + stderr;
}

export interface SqlConnection {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** The temporal-schema service: deploy/temporal/scripts/setup-schema.sh with temporal-sql-tool on PATH. */
export function setupSchemas(bin: TemporalServerBinaries, sql: SqlConnection): Promise<string> {
  return runDeployScript(
    'setup-schema.sh',
    { SQL_HOST: sql.host, SQL_PORT: String(sql.port), SQL_USER: sql.user, SQL_PASSWORD: sql.password },
    { schemaRoot: bin.schemaRoot, bin: [path.dirname(bin.sqlTool)] },
  );
}

/** The temporal-namespace service: deploy/temporal/scripts/create-namespace.sh with the Temporal CLI on PATH. */
export async function createNamespace(address: string, namespace: string, log: Logger): Promise<string> {
  const cli = await findTemporalCli(log, { explicit: process.env.TEMPORAL_CLI });
  return runDeployScript('create-namespace.sh', { TEMPORAL_ADDRESS: address, NAMESPACE: namespace, RETENTION: '168h' }, { bin: [path.dirname(cli)] });
}

export interface TemporalServer {
  address: string;
  /** Stops the server (SIGTERM, as `docker compose stop` does). */
  stop(): Promise<void>;
  /** Starts it again on the same ports and databases. */
  start(): Promise<void>;
  output(): string;
}

/**
 * The server configuration the `temporalio/server` image renders from its environment in docker-compose.yml
 * (DB=postgres12, DBNAME, VISIBILITY_DBNAME, NUM_HISTORY_SHARDS=4, the dynamic config file), on 127.0.0.1 ports.
 */
function serverConfig(sql: SqlConnection, ports: Record<'frontend' | 'frontendHttp' | 'history' | 'matching' | 'worker', number>, membership: Record<string, number>): string {
  const store = (database: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `${sql.host}:${sql.port}`,
      connectProtocol: 'tcp',
      user: sql.user,
      password: sql.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: '127.0.0.1', ...extra },
  });
  return YAML.stringify({
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: 4,
      datastores: { default: store('temporal', 20), visibility: store('temporal_visibility', 10) },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      frontend: service(ports.frontend, membership.frontend!, { httpPort: ports.frontendHttp }),
      history: service(ports.history, membership.history!),
      matching: service(ports.matching, membership.matching!),
      worker: service(ports.worker, membership.worker!),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${ports.frontend}` } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: { filepath: path.join(root, 'deploy', 'temporal', 'dynamicconfig', 'production-sql.yaml'), pollInterval: '10s' },
  });
}

/**
 * Free ports below 32768: Temporal keeps membership ports in a smallint column (cluster_membership.rpc_port), so
 * the kernel's ephemeral ports (32768 and up, what port 0 gives) make the server fail at start.
 */
async function lowPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (ports.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) ports.add(port);
  }
  return [...ports];
}

/** Writes the configuration under `dir/config/topology.yaml` and starts `temporal-server start` on it. */
export async function startTemporalServer(bin: TemporalServerBinaries, sql: SqlConnection, dir: string, log: Logger): Promise<TemporalServer> {
  const [frontend, frontendHttp, history, matching, worker, m1, m2, m3, m4] = await lowPorts(9);
  await fs.mkdir(path.join(dir, 'config'), { recursive: true });
  await fs.writeFile(
    path.join(dir, 'config', 'topology.yaml'),
    serverConfig(sql, { frontend: frontend!, frontendHttp: frontendHttp!, history: history!, matching: matching!, worker: worker! }, { frontend: m1!, history: m2!, matching: m3!, worker: m4! }),
  );
  const address = `127.0.0.1:${frontend}`;
  let child: ChildProcess | undefined;
  let output = () => '';

  const start = async () => {
    const c = spawnManaged(bin.server, ['--root', dir, '--config', 'config', '--env', 'topology', '--allow-no-auth', 'start'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    output = printed(c, { last: 60 });
    await waitForTemporal(address, {
      timeoutMs: 120_000,
      exited: () => (c.exitCode === null && c.signalCode === null ? undefined : `temporal-server exited (${c.exitCode ?? c.signalCode}):\n${output()}`),
    });
    log.info('temporal-server ready', { address });
  };
  await start();
  return {
    address,
    start,
    stop: async () => {
      if (child) await stopManaged(child, 20_000);
    },
    output: () => output(),
  };
}
