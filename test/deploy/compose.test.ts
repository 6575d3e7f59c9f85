import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { validate, ValidationSeverity } from 'dockerfile-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { findDockerCompose, imageEnvironment } from '../support/compose.js';
import { PGVECTOR_VERSION } from '../support/pgvector-postgres.js';
import { composeTemporalVersion } from '../topology/temporal-server.js';

/**
 * docker-compose.yml and the Dockerfile, checked by tools of Docker's own where they run without a Docker engine:
 * Compose's parser (`docker-compose config`: interpolation, the Compose Specification's schema, references between
 * services) and the Dockerfile linter of Docker's language server (dockerfile-utils). The topology test
 * (test/topology/, docs/topology.md) runs what compose runs; this holds the files to it: the same versions of
 * PostgreSQL's pgvector and Temporal, settings Gristmill knows, what building the image needs.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
let compose: string;
let dir: string;

interface Service {
  image?: string;
  environment?: Record<string, string | null>;
}

async function config(env: string, ...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const envFile = path.join(dir, `${Math.random().toString(36).slice(2)}.env`);
  await fs.writeFile(envFile, env);
  try {
    const r = await run(compose, ['-f', path.join(root, 'docker-compose.yml'), '--env-file', envFile, ...args], { env: { PATH: process.env.PATH ?? '' } });
    return { ...r, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

const PASSWORDS = 'POSTGRES_PASSWORD=aa11\nGRISTMILL_DB_PASSWORD=bb22\nTEMPORAL_DB_PASSWORD=cc33\n';

beforeAll(async () => {
  compose = await findDockerCompose(createLogger('info', 'compose'));
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-compose-'));
}, 30 * 60_000);

describe('docker-compose.yml', () => {
  it("is valid to Compose's own parser, with the example .env's settings and its three passwords", async () => {
    const example = await fs.readFile(path.join(root, 'deploy', '.env.example'), 'utf8');
    const filled = example.replace(/^(POSTGRES_PASSWORD|GRISTMILL_DB_PASSWORD|TEMPORAL_DB_PASSWORD)=$/gm, (_, name: string) => `${name}=0123abcd`);
    const r = await config(filled, 'config', '--quiet');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const services = (await config(PASSWORDS, '--profile', 'scale', 'config', '--services')).stdout.split('\n').filter(Boolean);
    expect(services.sort()).toEqual(['app', 'postgres', 'temporal', 'temporal-namespace', 'temporal-schema', 'temporal-ui', 'worker']);
  });

  it('refuses to start without a password, naming it', async () => {
    const r = await config('POSTGRES_PASSWORD=aa11\nTEMPORAL_DB_PASSWORD=cc33\n', 'config', '--quiet');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/GRISTMILL_DB_PASSWORD.*set GRISTMILL_DB_PASSWORD in \.env/);
  });

  it('runs the versions the tests run, with settings Gristmill knows', async () => {
    const { services } = JSON.parse((await config(PASSWORDS, '--profile', 'scale', 'config', '--format', 'json')).stdout) as { services: Record<string, Service> };
    // PostgreSQL with the pgvector the pgvector tests build; Temporal's server at the version the topology test builds.
    expect(services.postgres!.image).toBe(`pgvector/pgvector:${PGVECTOR_VERSION.slice(1)}-pg16`);
    expect(services.temporal!.image).toBe(`temporalio/server:${await composeTemporalVersion()}`);
    const known = new Set([...(await fs.readFile(path.join(root, 'docs', 'configuration.md'), 'utf8')).matchAll(/^\| `([A-Z0-9_]+)`/gm)].map((m) => m[1]));
    for (const name of ['app', 'worker']) {
      const env = services[name]!.environment ?? {};
      expect(env.SEARCH_VECTORS).toBe('pgvector');
      const unknown = Object.keys(env).filter((k) => !known.has(k));
      expect(unknown, `${name} sets variables that are no setting (docs/configuration.md)`).toEqual([]);
    }
  });
});

describe('Dockerfile', () => {
  it("has nothing the Docker language server's linter flags", async () => {
    const text = await fs.readFile(path.join(root, 'Dockerfile'), 'utf8');
    const found = validate(text).map((d) => `line ${d.range.start.line + 1}: ${d.message} (${d.severity === ValidationSeverity.ERROR ? 'error' : 'warning'})`);
    expect(found).toEqual([]);
    // And the linter does flag a broken one: the check is live.
    expect(validate('FROM node:20 AS a\nFROM node:20 AS a\nCOPY only-one\n').length).toBeGreaterThan(0);
  });

  it('builds on the Node.js major the project requires', async () => {
    const text = await fs.readFile(path.join(root, 'Dockerfile'), 'utf8');
    const pkg = JSON.parse(await fs.readFile(path.join(root, 'package.json'), 'utf8')) as { engines?: { node?: string } };
    const major = /ARG NODE_IMAGE=node:(\d+)-/.exec(text)?.[1];
    expect(major).toBeDefined();
    expect(pkg.engines?.node ?? '').toMatch(new RegExp(`^>=${major}\\.`));
  });

  it("gives its processes the runtime stage's environment, which the replica benchmark runs with", async () => {
    expect(await imageEnvironment()).toEqual({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '3000', DATA_DIR: '/data', MALLOC_MMAP_THRESHOLD_: '131072' });
    // Only the last stage's: a build stage's ENV is not the image's.
    const file = path.join(dir, 'Dockerfile.stages');
    await fs.writeFile(file, 'FROM node:20 AS build\nENV BUILD_ONLY=1\nFROM node:20\nENV A=1 \\\n    B="two words"\nENV C=3\n');
    expect(await imageEnvironment(file)).toEqual({ A: '1', B: 'two words', C: '3' });
  });
});
