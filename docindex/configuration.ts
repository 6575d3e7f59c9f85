import os from 'node:os';
import path from 'node:path';
import type { ConfigSection, SectionRows } from '../core/config.js';
import { ConfigError } from '../core/errors.js';
import { bool, int, oneOf, parser, refine, resolvedPath, text, url } from '../core/settings.js';
import { parseRefreshEvery, type RefreshEvery } from './refresh/every.js';
import { parsePolicy } from './refresh/policy.js';
import { isPackageSource } from './sources/types.js';

export interface EmbeddingsConfig {
  /** Where local models are looked up and downloads go (DATA_DIR/models). */
  cacheDir: string;
  /**
   * Fetch a local model from the Hugging Face hub (or `modelHost`) on first use when it is not there, so semantic
   * search works out of the box; an install that cannot reach it falls back to keyword search.
   */
  allowDownloads: boolean;
  /** Where models are downloaded from: the Hugging Face hub, or a mirror of it (ends with '/'). */
  modelHost: string;
  /** The model of the default local profile created at first start. */
  defaultModel: string;
  /** A folder holding that model, instead of the cache. */
  defaultModelPath: string | undefined;
}

/** Where libraries come from beyond repositories: registries, sites, and registering on a search's miss. */
export interface SourcesConfig {
  /** Look a name nobody registered up in the registries and index it (INDEX_ON_DEMAND). */
  onDemand: boolean;
  /** The registries looked up on demand, in order of preference (INDEX_ON_DEMAND_REGISTRIES). */
  onDemandRegistries: ('npm' | 'pypi' | 'crates')[];
  /** How long query-docs waits for a library being indexed before it answers INDEXING_IN_PROGRESS. */
  onDemandWaitMs: number;
  /** At most this many libraries registered on demand (a bound on what searches can make the index do). */
  onDemandMaxLibraries: number;
  /** The largest package archive downloaded, and the most its files may take once extracted. */
  packageMaxBytes: number;
  /** A site source reads at most this many pages. */
  siteMaxPages: number;
}

/** The optional reranking stage after search (docindex/rerank/): a remote `/rerank` server; off while `url` is unset. */
export interface RerankConfig {
  /** The server's rerank endpoint (RERANK_URL), e.g. `http://localhost:8080/rerank`; unset: no reranking. */
  url: string | undefined;
  /** `cohere`: `{ query, documents, top_n }` -> `{ results: [{ index, relevance_score }] }`; `tei`: `{ query, texts }` -> `[{ index, score }]`. */
  api: 'cohere' | 'tei';
  /** The model named in requests (RERANK_MODEL); servers with one model ignore it. */
  model: string | undefined;
  /** Sent as a Bearer token (RERANK_KEY, a secret). */
  apiKey: string | undefined;
  /** How many of a search's first results are reranked (RERANK_CANDIDATES). */
  candidates: number;
  /** How long a query waits for the server before keeping the search's order (RERANK_TIMEOUT_MS). */
  timeoutMs: number;
  /** 1: the server's order; below it, blended with the search's own rank (RERANK_WEIGHT). */
  weight: number;
}

/** Where semantic search runs (SEARCH_VECTORS): in each API process's memory, or in PostgreSQL with pgvector. */
export const VECTOR_STORES = ['memory', 'pgvector'] as const;
export type VectorStore = (typeof VECTOR_STORES)[number];

/** The documentation index's settings, at the configuration's top level (and its `embeddings`). */
export interface DocIndexConfig {
  /** How long an indexing step may go without progress (a heartbeat) before Temporal retries it on another worker. */
  indexingHeartbeatTimeoutMs: number;
  /** Embedding providers: where local models live and whether they may be downloaded. */
  embeddings: EmbeddingsConfig;
  /** Packages, sites and on-demand registration. */
  sources: SourcesConfig;
  /** Reranking a search's first results with a remote model. */
  rerank: RerankConfig;
  /**
   * Folders under which local libraries may be registered, browsed and read (LOCAL_SOURCE_ROOTS); by default the home
   * folder of the user running Gristmill. Never empty: `/` is how to allow everywhere. See docindex/local-folders.ts.
   */
  localSourceRoots: string[];
  /**
   * Semantic search: where vectors are searched (SEARCH_VECTORS): `memory`, matrices in each API process, or
   * `pgvector`, in PostgreSQL (docindex/search/pgvector.ts).
   */
  searchVectors: VectorStore;
  /** Semantic search: the most memory the in-process vector matrices may take (SEARCH_VECTOR_CACHE_MB). */
  searchVectorCacheBytes: number;
  /** Keyword search: the most memory the in-process keyword indexes may take (SEARCH_KEYWORD_CACHE_MB). */
  searchKeywordCacheBytes: number;
  /** Context answers: the most memory the snippet rows kept in this process may take (SEARCH_SNIPPET_CACHE_MB; 0 = none kept). */
  searchSnippetCacheBytes: number;
  /** Semantic search: how many questions' vectors each embedding provider keeps (SEARCH_QUERY_VECTORS; 0 = none kept). */
  searchQueryVectors: number;
  /** Semantic search: threads that scan vectors (SEARCH_THREADS; 0 = on the event loop). */
  searchThreads: number;
  /** Keyword search: the most matches a query reads, shared between its terms (SEARCH_RANK_CANDIDATES); see docindex/search/keyword.ts. */
  searchRankCandidates: number;
  /** How often a library's refresh schedule runs unless the library says (INDEX_REFRESH_EVERY); `off`: no schedules. */
  indexRefreshEvery: RefreshEvery;
  /** Which new versions a refresh registers unless the library says (INDEX_VERSION_POLICY), as typed and checked. */
  indexVersionPolicy: string;
}

declare module '../core/config.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the fields are DocIndexConfig's
  interface ServiceConfigs extends DocIndexConfig {}
}

/** LOCAL_SOURCE_ROOTS: never none (an empty list would refuse everything without saying why). */
const sourceRoots = parser('absolute folders, `:`-separated (`;` on Windows)', (raw, name) => {
  const roots = raw.split(path.delimiter).filter(Boolean);
  if (!roots.length) throw new ConfigError(`${name} takes absolute folders separated by "${path.delimiter}", and names none`);
  return roots.map((p) => {
    if (!path.isAbsolute(p)) throw new ConfigError(`${name} takes absolute folders separated by "${path.delimiter}", got "${p}"`);
    return path.resolve(p);
  });
});

/** A refresh setting read by its own parser (docindex/refresh/), its error said of the variable. */
function checked<T>(accepts: string, read: (raw: string) => T) {
  return parser(accepts, (raw, name) => {
    try {
      return read(raw);
    } catch (err) {
      throw new ConfigError(`${name}: ${(err as Error).message}`);
    }
  });
}

const MB = 1024 * 1024;

/** INDEX_ON_DEMAND_REGISTRIES: known registries only, each once. */
const registryList = parser('registries, comma-separated, of `npm`, `pypi`, `crates`', (raw, name) => {
  const list = raw.split(',').map((r) => r.trim().toLowerCase()).filter(Boolean);
  for (const r of list) if (!isPackageSource(r)) throw new ConfigError(`${name}: "${r}" is not npm, pypi or crates`);
  return [...new Set(list)] as SourcesConfig['onDemandRegistries'];
});

/** RERANK_WEIGHT: a fraction from 0 to 1. */
const fraction = parser('`0` to `1`', (raw, name) => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(`${name} must be a number from 0 to 1, got "${raw}"`);
  return n;
});

type Nested = 'embeddings' | 'sources' | 'rerank';
const ROWS: Omit<SectionRows<DocIndexConfig>, Nested> & {
  embeddings: SectionRows<EmbeddingsConfig>;
  sources: SectionRows<SourcesConfig>;
  rerank: SectionRows<RerankConfig>;
} = {
  indexingHeartbeatTimeoutMs: {
    variable: 'INDEXING_HEARTBEAT_TIMEOUT_MS', section: 'docindex', parse: int(1000, 3_600_000), default: '45000',
    meaning: "how long an indexing step may go without a heartbeat (the crawl's progress, git's and files parsed; the swap, embedding and statistics steps' liveness) before it is stopped and retried, on another worker if this one died",
  },
  localSourceRoots: {
    variable: 'LOCAL_SOURCE_ROOTS', section: 'docindex', parse: sourceRoots,
    default: { text: 'your home folder', value: () => [path.resolve(os.homedir())] },
    meaning:
      'folders under which local libraries may be registered, browsed and read, compared by real path (docindex/local-folders.ts); `/` allows ' +
      'everywhere. Credential folders (`.ssh`, `.gnupg`, `.aws`, ...) and `DATA_DIR` never are. Give the API and the indexing workers the same value',
  },
  indexRefreshEvery: {
    variable: 'INDEX_REFRESH_EVERY', section: 'docindex', parse: checked('`off`, or a duration: `30m`, `6h`, `1d`', parseRefreshEvery), default: '1d',
    meaning:
      "how often each library's refresh schedule (a Temporal Schedule, `refresh:<library>`) looks for a moved branch and new versions, unless " +
      'the library sets its own; `off` removes the schedules. At least a minute (docindex/refresh/)',
  },
  indexVersionPolicy: {
    variable: 'INDEX_VERSION_POLICY', section: 'docindex', parse: checked('a version policy', (raw) => parsePolicy(raw).text), default: 'minors:3',
    meaning:
      'which versions a refresh registers and indexes, unless the library sets its own: `none`, `latest`, `minors:N` (the newest patch of each ' +
      'of the last N minor lines), `majors:N`, `match:<glob>` or `match:/<regex>/`, combined with `,`; pre-releases and yanked versions only ' +
      'by a `match:` (docindex/refresh/policy.ts)',
  },
  searchVectors: {
    variable: 'SEARCH_VECTORS', section: 'search', parse: oneOf(VECTOR_STORES), default: 'memory',
    meaning:
      "where semantic search runs: `memory`, each API process scans the library's vectors in memory; `pgvector`, PostgreSQL does (it needs the " +
      'pgvector extension; the vectors live in a `vector` column and API processes hold none: docs/documentation-index.md, "Vector search in PostgreSQL")',
  },
  searchVectorCacheBytes: {
    variable: 'SEARCH_VECTOR_CACHE_MB', section: 'search', parse: refine(int(1, 1_048_576), (mb) => mb * MB), default: '512',
    meaning: "memory (MB) for semantic search's in-process vector matrices (least recently used dropped)",
  },
  searchKeywordCacheBytes: {
    variable: 'SEARCH_KEYWORD_CACHE_MB', section: 'search', parse: refine(int(0, 1_048_576), (mb) => mb * MB), default: '256',
    meaning:
      "memory (MB) for keyword search's in-process indexes (least recently used dropped): a library's index is built in the background on its " +
      'first keyword query (its second within ten minutes once the cache is half full) and answers from then on, the SQL ranking answering ' +
      'meanwhile; a library whose index does not fit is ranked in SQL; `0` always ranks in SQL (docs/ranking.md)',
  },
  searchSnippetCacheBytes: {
    variable: 'SEARCH_SNIPPET_CACHE_MB', section: 'search', parse: refine(int(0, 1_048_576), (mb) => mb * MB), default: '64',
    meaning:
      'memory (MB) for the snippet rows context answers showed lately (with the snippets text answers widened them with), kept in this ' +
      'process until a re-index changes their library (least recently shown dropped), so a question asked again reads no snippet from PostgreSQL; `0` keeps none',
  },
  searchQueryVectors: {
    variable: 'SEARCH_QUERY_VECTORS', section: 'search', parse: int(0, 1_000_000), default: '1000',
    meaning:
      'how many questions\' vectors semantic and hybrid search keep in this process (least recently asked dropped), so a question asked again is ' +
      'not embedded again; dropped when the embedding profile changes; `0` embeds every question',
  },
  searchThreads: {
    variable: 'SEARCH_THREADS', section: 'search', parse: int(0, 64),
    default: { text: 'CPUs, at most 4', value: (c) => Math.min(4, c.cpuCount) },
    meaning: 'threads that scan vectors for semantic search; `0` scans on the event loop',
  },
  searchRankCandidates: {
    variable: 'SEARCH_RANK_CANDIDATES', section: 'search', parse: int(100, 10_000_000), default: '1000',
    meaning:
      'how many matches keyword search reads and ranks: each word of a query its share (this divided by the number of words). A word held by at ' +
      "least its share of the library's snippets (known from statistics each indexing run stores) is read to its share through the library's own " +
      'index, which bounds the cost of very common words (docindex/search/keyword.ts; see [ranking.md](ranking.md))',
  },
  sources: {
    onDemand: {
      variable: 'INDEX_ON_DEMAND', section: 'sources', parse: bool(), default: 'true',
      meaning:
        'when a library search finds nothing, look the name up in the registries, register the best match and index it (`false` for an ' +
        'air-gapped install; see docs/documentation-index.md, "On demand")',
    },
    onDemandRegistries: {
      variable: 'INDEX_ON_DEMAND_REGISTRIES', section: 'sources', parse: registryList, default: 'npm,pypi,crates',
      meaning: "the registries looked up on demand, in order of preference; each is reached through its own client's configuration",
    },
    onDemandWaitMs: {
      variable: 'INDEX_ON_DEMAND_WAIT_MS', section: 'sources', parse: int(0, 300_000), default: '30000',
      meaning: 'how long `query-docs` (MCP) and `/api/v2/context` wait for a library being indexed before answering that it is still indexing',
    },
    onDemandMaxLibraries: {
      variable: 'INDEX_ON_DEMAND_MAX_LIBRARIES', section: 'sources', parse: int(0, 1_000_000), default: '500',
      meaning: 'at most this many libraries registered on demand; beyond it a miss is only a miss',
    },
    packageMaxBytes: {
      variable: 'PACKAGE_MAX_MB', section: 'sources', parse: refine(int(1, 100_000), (mb) => mb * MB), default: '200',
      meaning: 'the largest package archive downloaded, and the most its files may take extracted (MB)',
    },
    siteMaxPages: {
      variable: 'SITE_MAX_PAGES', section: 'sources', parse: int(1, 1_000_000), default: '2000',
      meaning: 'the most pages a documentation site source reads',
    },
  },
  rerank: {
    url: {
      variable: 'RERANK_URL', section: 'rerank', parse: url(),
      meaning:
        "a rerank server's endpoint (Text Embeddings Inference, Infinity, vLLM, llama.cpp's server: `http://host:port/rerank`; Jina, Cohere: their " +
        "`/v1/rerank` or `/v2/rerank`); unset: no reranking. Reranking is measured, not assumed: see [ranking.md](ranking.md), \"Reranking\"",
    },
    api: {
      variable: 'RERANK_API', section: 'rerank', parse: oneOf(['cohere', 'tei'] as const, { anyCase: true }), default: 'cohere',
      meaning:
        "the request's shape: `cohere` (`documents`, answered with `results: [{ index, relevance_score }]`; Cohere, Jina, vLLM, Infinity, llama.cpp) " +
        'or `tei` (`texts`, answered with `[{ index, score }]`; Text Embeddings Inference)',
    },
    model: { variable: 'RERANK_MODEL', section: 'rerank', parse: text(), meaning: 'the model named in requests (servers serving one model ignore it)' },
    apiKey: { variable: 'RERANK_KEY', section: 'rerank', parse: text(), secret: true, meaning: 'sent as `Authorization: Bearer`' },
    candidates: {
      variable: 'RERANK_CANDIDATES', section: 'rerank', parse: int(2, 200), default: '30',
      meaning: "how many of a search's first results are sent to the server and reordered; the rest keep their place after them",
    },
    timeoutMs: {
      variable: 'RERANK_TIMEOUT_MS', section: 'rerank', parse: int(50, 60_000), default: '2000',
      meaning: "how long a query waits for the server; past it, or on any error, the search's own order is answered (and a warning logged)",
    },
    weight: {
      variable: 'RERANK_WEIGHT', section: 'rerank', parse: fraction, default: '1',
      meaning: "`1`: the server's order; below it, each candidate's rank is blended with its search rank (reciprocal ranks, this weight on the server's)",
    },
  },
  embeddings: {
    cacheDir: {
      variable: 'EMBEDDING_CACHE_DIR', section: 'embeddings', parse: resolvedPath(),
      default: { text: '`DATA_DIR/models`', value: (c) => path.join(c.dataDir, 'models') },
      meaning: 'where local embedding models are looked up (and downloaded to)',
    },
    allowDownloads: {
      variable: 'EMBEDDING_ALLOW_DOWNLOADS', section: 'embeddings', parse: bool(), default: 'true',
      meaning:
        'download a missing local model on first use, so semantic search works out of the box (`false`: only models already on disk; an install ' +
        'that cannot reach the host falls back to keyword search; see docs/documentation-index.md, "Embeddings")',
    },
    modelHost: {
      variable: 'EMBEDDING_MODEL_HOST', section: 'embeddings', parse: refine(url(), (u) => u.replace(/\/*$/, '/')), default: 'https://huggingface.co/',
      meaning: 'where local models are downloaded from: the Hugging Face hub or a mirror of it',
    },
    defaultModel: {
      variable: 'EMBEDDING_DEFAULT_MODEL', section: 'embeddings', parse: text(), default: 'Xenova/all-MiniLM-L6-v2',
      meaning: 'the model of the local profile created at first start',
    },
    defaultModelPath: { variable: 'EMBEDDING_MODEL_PATH', section: 'embeddings', parse: resolvedPath(), meaning: 'a folder holding that model, instead of the cache' },
  },
};

/** The documentation index's settings (docs/configuration.md), declared once; runtime/services.ts reads them. */
export const docIndexConfiguration: ConfigSection = {
  sections: {
    docindex: { title: 'Documentation index', about: 'Indexing libraries (docindex/).' },
    search: { title: 'Search', about: 'Keyword and semantic search over indexed libraries (docindex/search/).' },
    embeddings: { title: 'Embeddings', about: 'Local embedding models for semantic search (docindex/embeddings/).' },
    sources: { title: 'Sources', about: 'Packages of a registry and documentation sites as libraries, and registering them on demand (docindex/sources/).' },
    rerank: { title: 'Reranking', about: "An optional remote model that reorders a search's first results (docindex/rerank/); off by default." },
  },
  table: ROWS,
};
