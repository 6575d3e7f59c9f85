import type { Conversion, UnitSystem } from './language.js';
import type { SchemaRecipe } from './recipe.js';
import type { TranscriptionInput } from '../transcription/contract.js';

/**
 * What the API, the workflow and the activities of the recipe queue agree on. Pure (no imports with side effects):
 * the workflow bundle includes it.
 */
export const RECIPE_KIND = 'recipe';
export const RECIPE_WORKFLOW = 'recipeWorkflow';

/** Queue item statuses (docs/recipes.md). `unhealthy`: a recoverable failure outlasted its attempts; `error`: permanent. */
export const QUEUE_STATUSES = ['pending', 'in_progress', 'success', 'error', 'unhealthy'] as const;
export type QueueStatus = (typeof QUEUE_STATUSES)[number];

/** How the job machinery's words map onto the queue's; `unhealthy` is written by the workflow itself. */
export const RECIPE_STATUSES = {
  queued: 'pending',
  running: 'in_progress',
  done: 'success',
  failed: 'error',
  cancelled: 'error',
} as const satisfies Record<string, QueueStatus>;
export const UNHEALTHY: QueueStatus = 'unhealthy';
/** Items in these states may be retried. */
export const RETRYABLE_STATUSES: readonly QueueStatus[] = ['error', 'unhealthy'];
export const FINISHED_STATUSES: readonly QueueStatus[] = ['success', 'error', 'unhealthy'];

export const PHASES = ['extraction', 'parsing', 'uploading'] as const;
export type PhaseName = (typeof PHASES)[number];
export type PhaseStatus = 'pending' | 'in_progress' | 'completed' | 'error';

/**
 * A step within a phase that not every item takes: `speech` (extraction: the video's speech transcribed) and
 * `pictures` (parsing: the post's pictures and video frames sent to the model, or `skipped` and why).
 */
export type PhaseStepName = 'speech' | 'pictures';
export interface PhaseStep {
  name: PhaseStepName;
  status: 'in_progress' | 'completed' | 'skipped' | 'error';
  /** What it did or why it was skipped, in a sentence. */
  detail?: string;
  startedAt?: string;
  completedAt?: string;
}

/** One phase of an item (docs/recipes.md), plus how many attempts the current run has made of it. */
export interface PhaseEntry {
  name: PhaseName;
  status: PhaseStatus;
  /** When the current run first started it. */
  startedAt?: string;
  /** When it ended: completed, or failed. */
  completedAt?: string;
  /** 0 to 100. */
  progress?: number;
  attempts?: number;
  /** The optional steps it took (or skipped), in order. */
  steps?: PhaseStep[];
}

/** One recipe of the post (a post may hold several) and, once uploaded, where the recipe manager has it. */
export interface RecipeEntry {
  recipe: SchemaRecipe;
  /** Its page in the recipe manager. */
  recipeManagerUrl?: string;
  /** Mealie's slug or Tandoor's id of the recipe created: a retried upload links it instead of creating another. */
  managerRecipeId?: string;
}

/** What an item asked for beyond its URL (POST /api/queue); unset ones come from RECIPE_LANGUAGE and RECIPE_UNITS. */
export interface RecipeOptions {
  language?: string;
  units?: UnitSystem;
}

/**
 * An item's results (docs/recipes.md); filled as phases complete. `recipes` has every recipe of the post;
 * `recipe` and `recipeManagerUrl` are the first's (as before several recipes per post).
 */
export interface RecipeResults {
  recipe?: SchemaRecipe;
  recipes?: RecipeEntry[];
  recipeManagerUrl?: string;
  /** The language and units the model was asked to write the recipes in, when it was asked to change them. */
  conversion?: Conversion;
  extractedText?: string;
  thumbnail?: string;
  /** The video's speech as the transcription service heard it, when the speech step ran: the model read it too. */
  transcript?: string;
  /** The transcription job that heard it (GET /api/jobs/:id). */
  transcriptionJobId?: string;
}

/** Every bound comes in from configuration (docs/jobs.md, "Workflow code"), so tests use short ones. */
export interface RecipeLimits {
  /** QUEUE_TIMEOUT_MS: longest attempt of a phase. */
  timeoutMs: number;
  /** QUEUE_RETRY_ATTEMPTS: attempts of a phase for recoverable failures. */
  retryAttempts: number;
  /** QUEUE_RETRY_BACKOFF_MS: the first wait between attempts (doubling, up to a minute). */
  retryBackoffMs: number;
}

export interface RecipeInput {
  itemId: string;
  limits: RecipeLimits;
}

/** What a phase activity is called with. */
export interface StepInput {
  itemId: string;
  runId: string;
  timeoutMs: number;
}

/**
 * What extraction found out about the post's video: `now`, its speech is to be transcribed before parsing (the
 * caption only points to the video, or RECIPE_SPEECH=always); `fallback`, when the model finds no recipe in the
 * caption. Absent: no speech step.
 */
export type SpeechPlan = 'now' | 'fallback';

export interface ExtractOutcome {
  via: string;
  chars: number;
  speech?: SpeechPlan;
}

/** Parsing, told whether a caption without a recipe may still have one in the video's speech. */
export interface ParseInput extends StepInput {
  speechFallback?: boolean;
}

/** The speech step's transcription job: its transcript is there already, or its workflow is to be run as a child. */
export type SpeechStart =
  | { kind: 'transcribed'; jobId: string }
  | { kind: 'transcribe'; jobId: string; workflowId: string; taskQueue: string; input: TranscriptionInput; subject: string };

/** The speech step's child workflow failed: how the item ends. */
export interface SpeechFailureInput extends StepInput {
  jobId: string;
  /** The child's run, whose history says whether it failed for good. */
  workflowId: string;
  childRunId: string | undefined;
  /** The child's failure as the workflow saw it. */
  message: string;
  type: string | undefined;
}
export const SPEECH_ERROR = 'RecipeSpeechError';
export const SPEECH_UNHEALTHY = 'RecipeSpeechUnhealthy';

export interface RecipeOutcome {
  status: QueueStatus | 'stopped';
  recipeManagerUrl?: string;
}

/** Temporal has a little longer than the attempt's own deadline, so the attempt reports its timeout itself. */
export const ATTEMPT_GRACE_MS = 5000;

export const workflowIdFor = (itemId: string) => `recipe:${itemId}`;
