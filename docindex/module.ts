import type { ServiceModule } from '../runtime/service.js';
import { docIndexConfiguration } from './configuration.js';
import { closeProviders, ensureDefaultProfile } from './embeddings/profiles.js';
import { EmbeddingProfile } from './entities/embedding-profile.js';
import { RerankProfile } from './entities/rerank-profile.js';
import { Library, LibraryVersion } from './entities/library.js';
import { LibraryDocument, LibraryRules, SearchTerm, Setting, Snippet, SnippetEmbedding, StagedDocument } from './entities/snippet.js';
import { VectorPack } from './entities/vector-pack.js';
import { indexJobKind } from './kind.js';
import { migrations } from './migrations/index.js';
import { indexingPool } from './pool.js';
import { contextRoutes } from './routes/context.js';
import { embeddingSettingsRoutes } from './routes/embedding-settings.js';
import { indexJobRoutes } from './routes/index-jobs.js';
import { indexSettingsRoutes } from './routes/index-settings.js';
import { libraryRoutes } from './routes/libraries.js';
import { rerankProfileRoutes } from './routes/rerank-profiles.js';
import { closeRerankers } from './rerank/providers.js';
import { context7ErrorBody } from './search/context7.js';
import { closeSearch } from './search/search.js';
import { startWarmup, stopWarmups } from './search/warm.js';
import { ensurePgvector } from './search/pgvector.js';
import { reconcileRefreshSchedules } from './refresh/schedules.js';
import { sealPlainSecrets } from './secrets.js';

/** The documentation index (docs/documentation-index.md): libraries indexed into snippets, searched over REST and MCP. */
export const docIndexService: ServiceModule = {
  name: 'documentation index',
  kinds: [indexJobKind],
  // Imported when a worker starts: an API process never loads the parsers and the tokenizer's ranks (25 MB).
  queues: {
    indexing: async (deps) => {
      const [{ createIndexingActivities }, { createRefreshActivities }, { parsePool }] = await Promise.all([
        import('./activities.js'),
        import('./refresh/activities.js'),
        import('./parse/pool.js'),
      ]);
      // The parse threads load while the worker starts, not during its first job.
      parsePool().warm().catch((err: unknown) => deps.log.warn('the parse threads could not be started ahead', { error: (err as Error).message }));
      return { ...createIndexingActivities(deps), ...createRefreshActivities(deps) };
    },
  },
  pools: [indexingPool],
  configuration: docIndexConfiguration,
  workflows: new URL('./workflow.ts', import.meta.url),
  routes: [contextRoutes, libraryRoutes, indexJobRoutes, indexSettingsRoutes, embeddingSettingsRoutes, rerankProfileRoutes],
  // Each API process readies its search caches: the model at start, a library's indexes when it is indexed.
  apiStarted: startWarmup,
  // Context7's route family answers errors as `{error, message}`, auth failures included.
  errorFormats: [{ prefix: '/api/v2/', format: context7ErrorBody }],
  entities: [Library, LibraryVersion, LibraryDocument, Snippet, SearchTerm, SnippetEmbedding, VectorPack, LibraryRules, StagedDocument, Setting, EmbeddingProfile, RerankProfile],
  migrations,
  start: async ({ orm, config, log }) => {
    await sealPlainSecrets(orm, config, log);
    await ensureDefaultProfile(orm.em, config, log);
    if (config.searchVectors === 'pgvector') await ensurePgvector(orm, log);
  },
  // Every library's refresh schedule (docindex/refresh/schedules.ts): those made before schedules, a changed default.
  schedules: async (deps) => {
    const counts = await reconcileRefreshSchedules(deps);
    if (counts.failed) deps.log.warn('some refresh schedules could not be set up; they are tried again at the next start', counts);
  },
  stop: async () => {
    stopWarmups();
    await closeProviders();
    await closeRerankers();
    await closeSearch();
  },
};
