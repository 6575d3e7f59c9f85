import path from 'node:path';
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
