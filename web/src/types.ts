/** The API's resources, as far as the UI reads them (docs/ and /api/openapi.json have the rest). */

export type LibraryState = 'pending' | 'indexing' | 'indexed' | 'error';

/** Repositories, packages of a registry and documentation sites (web/src/sources.ts says how each is entered). */
export type LibrarySource = 'git-host' | 'local' | 'npm' | 'pypi' | 'crates' | 'website';

export interface Library {
  id: string;
  title: string;
  description: string | null;
  source: LibrarySource;
  /** The repository's URL or folder, the package's name, or the site's start URL. */
  sourceUrl: string;
  branch: string | null;
  /** A package's repository, as its registry records it. */
  repositoryUrl?: string | null;
  /** The package version the default scope holds. */
  latestVersion?: string | null;
  /** How often it is refreshed (`6h`, `1d`, `off`); null: the server's default. */
  refreshEvery?: string | null;
  /** Which new versions a refresh registers (`minors:3`, `match:v2.*`); null: the server's default. */
  versionPolicy?: string | null;
  /** Registered by a search that found nothing, not by a person. */
  onDemand?: boolean;
  state: LibraryState;
  totalSnippets: number;
  trustScore: number;
  lastIndexedAt: string | null;
  hasGitHostToken: boolean;
  versions: string[];
  embeddingCount: number;
  indexedVersions: string[];
}

/** GET /api/v1/libs/:id/refresh: the library's refresh schedule. */
export interface RefreshSchedule {
  every: string;
  paused: boolean;
  note: string | null;
  nextRunAt: string | null;
  lastRunAt: string | null;
  policy: string;
}

export type DependencyStatus = 'ready' | 'queued' | 'unknown';

/** POST /api/v1/libs/from-lockfile: what became of each direct dependency of a project. */
export interface LockfileResult {
  format: string;
  ecosystem: string;
  dependencies: { name: string; version: string; libraryId: string | null; status: DependencyStatus; reason?: string }[];
  summary: Record<DependencyStatus, number>;
  warnings: string[];
}

export interface Version {
  id: string;
  repositoryId: string;
  tag: string;
  title?: string;
  commitHash: string | null;
  state: string;
  totalSnippets: number;
  indexedAt: string | null;
}

export interface IndexJob {
  id: string;
  repositoryId: string;
  versionId: string | null;
  status: 'queued' | 'running' | 'done' | 'failed';
  progress: number;
  totalFiles: number;
  processedFiles: number;
  /** Stage `embedding`: snippets to embed, and embedded so far. */
  snippetsToEmbed?: number | null;
  embeddedSnippets?: number | null;
  stage: string;
  stageDetail: string | null;
  error: string | null;
}

/** A message of /api/v1/jobs/stream. */
export interface IndexBroadcast {
  jobId: string;
  repositoryId: string;
  versionId: string | null;
  event: 'state' | 'status' | 'progress';
  data: Partial<IndexJob>;
}

export interface Snippet {
  id: string;
  type: 'code' | 'info';
  title: string | null;
  content: string;
  language: string | null;
  breadcrumb: string | null;
  filePath: string;
  tokenCount: number;
}

export interface ContextResult {
  snippets: Snippet[];
  resultCount: number;
  rules: string[];
  searchMode: string;
  repository: { id: string; title: string };
  version: { requested: string; resolved: string; id: string } | null;
}

export interface EmbeddingProfile {
  id: string;
  name: string;
  provider: 'local-transformers' | 'remote-compatible' | 'none';
  model: string | null;
  dimensions: number | null;
  default: boolean;
  enabled: boolean;
  active: boolean;
  config: Record<string, unknown>;
}

export interface EmbeddingPreset {
  id: string;
  label: string;
  provider: 'remote-compatible';
  model: string;
  dimensions: number;
  config: Record<string, unknown>;
}

export type TranscriptionStatus = 'pending' | 'processing' | 'done' | 'failed' | 'cancelled';

export interface TranscriptionJob {
  id: string;
  title: string;
  status: TranscriptionStatus;
  progress: number;
  stage: string | null;
  stageDetail: string | null;
  error: string | null;
  source: 'url' | 'upload' | 'recording';
  sourceUrl: string | null;
  fileName: string | null;
  mode: string;
  appliedMode: string | null;
  transcript_source: 'captions' | 'asr' | null;
  /** Which backend and model made an `asr` transcript. */
  asrBackend: string | null;
  asrModel: string | null;
  segmentCount: number | null;
  files: Record<'srt' | 'vtt' | 'txt' | 'md' | 'json', string> | null;
  createdAt: string;
  segments?: TranscriptSegment[];
  /** The playlist (POST /api/playlists) the job is an entry of. */
  groupId?: string | null;
  /** Its translations (POST /api/jobs/:id/translations) and its summary (POST /api/jobs/:id/summary). */
  translations?: TranscriptExtra[];
  summary?: TranscriptExtra | null;
}

/** A translation or summary of a transcript: its own job, and its files once done. */
export interface TranscriptExtra {
  id: string;
  task: 'translation' | 'summary';
  language: string | null;
  status: TranscriptionStatus;
  progress: number;
  stage: string | null;
  stageDetail: string | null;
  error: string | null;
  files: Record<string, string> | null;
  summary?: { summary: string; chapters: { start: number; end: number; title: string; summary: string }[] };
}

export interface TranscriptSegment {
  id: number;
  start: number;
  end: number;
  text: string;
  speaker?: string;
  /** Set once corrected: what the backend said, and when. */
  edit?: { originalText: string; editedAt: string };
}

export type QueueStatus = 'pending' | 'in_progress' | 'success' | 'error' | 'unhealthy';

/** An optional step a phase took or skipped: extraction's `speech`, parsing's `pictures` (docs/recipes.md). */
export interface PhaseStep {
  name: string;
  status: 'in_progress' | 'completed' | 'skipped' | 'error';
  detail?: string;
}

export interface Phase {
  name: 'extraction' | 'parsing' | 'uploading';
  status: 'pending' | 'in_progress' | 'completed' | 'error';
  progress?: number;
  attempts?: number;
  steps?: PhaseStep[];
}

export interface QueueItem {
  id: string;
  url: string;
  status: QueueStatus;
  phases: Phase[];
  /** `recipes`: every recipe of the post (`recipe` and `recipeManagerUrl` are the first's). */
  results?: {
    recipe?: { name?: string };
    recipes?: { recipe: { name?: string }; recipeManagerUrl?: string }[];
    recipeManagerUrl?: string;
    thumbnail?: string;
    extractedText?: string;
    /** The transcription job that heard the video's speech, when the speech step ran. */
    transcriptionJobId?: string;
  };
  error?: string;
  runs: number;
  createdAt: string;
}

/** A `queue-update` of /api/queue/stream. */
export interface QueueUpdate {
  itemId: string;
  status: QueueStatus;
  progress?: Phase[];
  results?: QueueItem['results'];
  error?: string;
}

export interface Page<T> {
  items: T[];
  total: number;
  hasMore: boolean;
}
