import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DockerfileParser } from 'dockerfile-ast';
import { gristmillCacheDir, goBuildCached, onPath } from '../../core/binaries.js';
import type { Logger } from '../../core/log.js';

/**
 * Docker Compose's own command-line program, for checking docker-compose.yml with the parser Docker uses
 * (`docker-compose config` needs no Docker engine): `docker-compose` on PATH, else built once from its Go module
 * into the user cache (core/binaries.ts, `goBuildCached`), as the Temporal server is.
 */
export const COMPOSE_VERSION = 'v2.40.3';

export async function findDockerCompose(log: Logger): Promise<string> {
  const onThePath = await onPath('docker-compose');
  if (onThePath) return onThePath;
  const dir = await goBuildCached(
    path.join(gristmillCacheDir(), 'docker-compose', COMPOSE_VERSION),
    { what: `Docker Compose ${COMPOSE_VERSION}`, module: 'github.com/docker/compose/v2', version: COMPOSE_VERSION, commands: { 'docker-compose': 'cmd' }, asMainModule: true },
    log,
  );
  return path.join(dir, 'docker-compose');
}

/**
 * The environment the image gives every process (the `ENV` instructions of the Dockerfile's last stage), read with
 * the parser of Docker's language server, so what runs the image's way outside Docker (bench/replica.ts) runs with
 * the same variables, the allocator's among them.
 */
export async function imageEnvironment(dockerfile = fileURLToPath(new URL('../../Dockerfile', import.meta.url))): Promise<Record<string, string>> {
  const parsed = DockerfileParser.parse(await fs.readFile(dockerfile, 'utf8'));
  const stage = parsed.getFROMs().at(-1)?.getRange().start.line ?? -1;
  const env: Record<string, string> = {};
  for (const instruction of parsed.getENVs().filter((e) => e.getRange().start.line > stage)) {
    for (const property of instruction.getProperties()) env[property.getName()] = property.getValue() ?? '';
  }
  return env;
}
