import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/log.js';
import type { Orm } from '../../db/orm.js';
import type { EventHub, Subscription } from '../../jobs/hub.js';
import type { StoredEvent } from '../../jobs/events.js';
import { activeEmbeddingProvider } from '../embeddings/profiles.js';
import { ModelUnavailableError } from '../embeddings/provider.js';
import { Library, LibraryVersion } from '../entities/library.js';
import { indexJobKind } from '../kind.js';
import type { Scope } from './keyword.js';
import { loadScopeKeywordIndex, scopeMatrix, scopeStampOf } from './search.js';

export interface WarmDeps {
  config: Config;
  log: Logger;
  orm: Orm;
  hub: EventHub;
}

/**
 * Gets an API process ready for search before a query asks, so the first query costs what the hundredth does: at
 * start, the active embedding profile's model is loaded (a local model, in its thread; a remote provider has nothing
 * to load); when an indexing job is done (its `status` event on the index kind's stream, which every API process's
 * EventHub hears), that scope's keyword index (keyword-index.ts) and vectors are loaded into their caches under the
 * keys its next query looks up, the vectors from the pack the embed stage wrote (vector-pack.ts). Warm-ups run one at
 * a time; one that fails is only logged, and the query loads what it needs itself.
 */
let queue = Promise.resolve();

/** Settles once every warm-up queued so far has run (for benchmarks that measure what follows one). */
export function warmupsIdle(): Promise<void> {
  return queue;
}

/** The warm-ups this process runs (one per API in it), stopped at shutdown. */
const running = new Set<{ stopped: boolean; subscription?: Subscription }>();

/** Stops every warm-up: none starts after this, and one still running may fail quietly as the pool closes. */
export function stopWarmups(): void {
  for (const w of running) {
    w.stopped = true;
    w.subscription?.close();
  }
  running.clear();
}

export function startWarmup(deps: WarmDeps): void {
  const log = deps.log.child('warm-up');
  const state: { stopped: boolean; subscription?: Subscription } = { stopped: false };
  running.add(state);
  const enqueue = (what: string, run: () => Promise<unknown>) => {
    queue = queue.then(async () => {
      if (state.stopped) return;
      const t0 = performance.now();
      try {
        await run();
        log.debug(`warmed ${what}`, { ms: Math.round(performance.now() - t0) });
      } catch (err) {
        // A model that is not there (downloads off, nothing indexed with it yet) is not this process's to report,
        // nor a failure while the process shuts down.
        const say = err instanceof ModelUnavailableError || state.stopped ? log.debug.bind(log) : log.warn.bind(log);
        say(`could not warm ${what}; the next query loads it`, { error: (err as Error).message });
      }
    });
  };
  enqueue('the embedding model', () => warmModel(deps));
  const onEvent = (e: StoredEvent) => {
    if (e.event !== 'status' || e.data.status !== 'done' || typeof e.data.repositoryId !== 'string') return;
    const scope: Scope = { repositoryId: e.data.repositoryId, versionId: typeof e.data.versionId === 'string' ? e.data.versionId : null };
    enqueue(`the indexes of ${scope.repositoryId}${scope.versionId ? ` (${scope.versionId})` : ''}`, () => warmScope(deps, scope));
  };
  deps.hub.subscribe(`kind:${indexJobKind.name}`, onEvent).then(
    (subscription) => (state.stopped ? subscription.close() : (state.subscription = subscription)),
    (err: Error) => log.warn('not warming scopes after indexing', { error: err.message }),
  );
}

/** Loads the active local model when it is on disk: a download is an indexing job's to make, with its progress. */
async function warmModel(deps: WarmDeps): Promise<void> {
  const provider = await activeEmbeddingProvider(deps.orm.em.fork(), deps.config);
  if (provider?.onDisk?.() !== false) await provider?.prepare?.();
}

/** Loads the scope's keyword index and matrix (in memory mode) as its next search will look them up, and the model it embeds queries with. */
export async function warmScope(deps: Pick<WarmDeps, 'config' | 'orm' | 'log'>, scope: Scope): Promise<void> {
  const em = deps.orm.em.fork();
  const lib = await em.findOne(Library, { id: scope.repositoryId });
  const version = scope.versionId ? await em.findOne(LibraryVersion, { id: scope.versionId }) : null;
  if (!lib || (scope.versionId && !version)) return;
  const stamp = scopeStampOf(lib, version);
  await loadScopeKeywordIndex(deps, em, scope, stamp);
  const provider = await activeEmbeddingProvider(em, deps.config);
  if (!provider) return;
  // With SEARCH_VECTORS=pgvector the vectors stay in PostgreSQL: only the model is readied.
  if (deps.config.searchVectors === 'pgvector') return void (await provider.prepare?.());
  const [, matrix] = await Promise.all([provider.prepare?.(), scopeMatrix(deps.config, em, scope, provider, stamp)]);
  // One scan, so the scan threads are started and hold the matrix's memory before the first query's.
  if (matrix.ids.length) await matrix.top(new Float32Array(matrix.dims), 1);
}
