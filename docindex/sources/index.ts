import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ActivityDeps } from '../../activities/deps.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/log.js';
import { outboundGuard } from '../../outbound/guard.js';
import type { Library, LibraryVersion } from '../entities/library.js';
import { checkoutPackage } from './packages.js';
import { checkoutRepository, type CheckoutProgress } from './repository.js';
import { type Checkout, isPackageSource, type SourceContext } from './types.js';
import { readSite } from './website/crawl.js';

/** A library's folder that outlives runs (a site's pages and their validators): DATA_DIR/sources/<hash of its id>. */
export const sourceCacheDir = (config: Pick<Config, 'dataDir'>, libraryId: string) =>
  path.join(config.dataDir, 'sources', createHash('sha256').update(libraryId).digest('hex').slice(0, 32));

/** What a source reads with, outside a job (a lookup for the API): no work folder, no heartbeat. */
export function lookupContext(config: Config, log: Logger, signal: AbortSignal): SourceContext {
  return { config, guard: outboundGuard(config), log, signal, workdir: '', heartbeat: () => undefined };
}

/**
 * The files of a library's scope (its default branch, latest version or site; or one version) in a folder, whatever
 * the source: the one switch on `source` of the indexing pipeline (docindex/pipeline.ts).
 */
export async function checkoutSource(
  deps: ActivityDeps,
  lib: Library,
  version: LibraryVersion | null,
  workdir: string,
  p: CheckoutProgress & { heartbeat(detail: string): void },
): Promise<Checkout & { packageVersion?: string }> {
  if (lib.source === 'git-host' || lib.source === 'local') return checkoutRepository(deps, lib, version, workdir, p);
  // git makes its own folder; downloads and pages need this one.
  await fs.mkdir(workdir, { recursive: true });
  const ctx: SourceContext = {
    config: deps.config,
    guard: outboundGuard(deps.config),
    log: deps.log,
    signal: p.signal,
    workdir,
    cacheDir: sourceCacheDir(deps.config, lib.id),
    heartbeat: p.heartbeat,
  };
  if (isPackageSource(lib.source)) return checkoutPackage(deps, lib, version, ctx, p);
  return readSite(lib.sourceUrl, ctx, { maxPages: deps.config.sources.siteMaxPages });
}
