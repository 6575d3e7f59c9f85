import { randomUUID } from 'node:crypto';
import { PermanentError } from '../core/errors.js';
import { taskQueue } from '../core/config.js';
import type { ActivityDeps } from '../activities/deps.js';
import type { Logger } from '../core/log.js';
import { Job } from '../db/entities/job.js';
import type { JobPatch } from '../jobs/store.js';
import { jobStopped } from '../jobs/ownership.js';
import { Transcription } from '../transcription/entities.js';
import { TRANSCRIPTION_KIND, TRANSCRIPTION_STATUSES } from '../transcription/kind.js';
import { workflowIdFor as transcriptionWorkflowId } from '../transcription/contract.js';
import { createTranscriptionRow, workflowInput } from '../transcription/service.js';
import type { SpeechMode } from './configuration.js';
import type { SpeechFailureInput, SpeechPlan, SpeechStart, StepInput } from './contract.js';
import { RecipeItem } from './entities.js';
import { type Extracted, MAX_TEXT } from './extract.js';
import { overallProgress, withPhase, withStep } from './phases.js';

/**
 * The speech step (docs/recipes.md, "The video's speech"): a post whose caption holds no recipe (it only points to
 * the video, or the model finds none in it), or every post with a video under RECIPE_SPEECH=always, has its video
 * transcribed by the transcription service, as a transcription job whose workflow is the recipe workflow's child
 * (same backends, chunking, cancellation and retries; cancelling the item cancels it). The transcript joins the text
 * the model reads. A transcription job of the item that finished is reused by a later attempt or retry; a video
 * longer than RECIPE_SPEECH_MAX_SECONDS fails the item for good.
 */

/** A caption that only sends the reader to the video ("recipe in the video", "full recipe in the reel"). */
const POINTS_TO_VIDEO =
  /\b(recipe|ingredients|instructions|steps|method)\b[^.\n]{0,40}?\b(in|on|from)\s+(the\s+|this\s+|my\s+)?(video|reel|clip|audio)\b|\b(watch|listen to)\s+(the\s+|this\s+)?(video|reel|clip)\b/i;
/** The longest caption taken as only pointing to the video: a longer one may hold the recipe too. */
const MAX_POINTER_CAPTION = 500;

/** Whether the caption holds nothing to cook from but a pointer to the video (or nothing at all). */
export function onlyPointsToVideo(text: string): boolean {
  const t = text.trim();
  if (!t) return true;
  const listed = t.split('\n').filter((l) => /^\s*([-•*]|\d+[.)])\s+/.test(l)).length;
  return listed < 2 && t.length <= MAX_POINTER_CAPTION && POINTS_TO_VIDEO.test(t);
}

/** When the post's speech is transcribed, from RECIPE_SPEECH and what extraction found; undefined: never. */
export function speechPlan(mode: SpeechMode, x: Pick<Extracted, 'text' | 'video' | 'structured'>): SpeechPlan | undefined {
  if (mode === 'off' || !x.video) return undefined;
  if (mode === 'always') return 'now';
  if (x.structured?.length) return undefined;
  return onlyPointsToVideo(x.text) ? 'now' : 'fallback';
}

type Deps = Pick<ActivityDeps, 'config' | 'orm' | 'jobs' | 'temporal'> & { log: Logger };

const stopped = (): never => jobStopped('item');

async function loadRow(deps: Pick<Deps, 'orm'>, itemId: string): Promise<RecipeItem> {
  const item = await deps.orm.em.fork().findOne(RecipeItem, { jobId: itemId });
  return item ?? stopped();
}

/** Changes the item (and its job) as the run that owns it, with the `queue-update` event; refuses otherwise. */
async function writeItem(deps: Pick<Deps, 'orm' | 'jobs'>, input: StepInput, patch: JobPatch, change: (item: RecipeItem) => void): Promise<void> {
  const { changed } = await deps.jobs
    .updateAsOwner(deps.orm.em.fork(), { jobId: input.itemId, runId: input.runId }, patch, {
      within: async (tx) => {
        const item = await tx.findOneOrFail(RecipeItem, { jobId: input.itemId });
        change(item);
        await tx.flush();
      },
    })
    .catch((err: unknown) => {
      if ((err as { code?: string }).code === 'JOB_NOT_FOUND') stopped();
      throw err;
    });
  if (!changed) stopped();
}

/** The transcription job the item made last, if any (its `detail` names the item). */
async function lastTranscriptionOf(deps: Pick<Deps, 'orm'>, itemId: string): Promise<Job | null> {
  const [found] = await deps.orm.em.fork().find(Job, { kind: TRANSCRIPTION_KIND, detail: { recipeItemId: itemId } }, { orderBy: { createdAt: 'desc' }, limit: 1 });
  return found ?? null;
}

/** A transcription job of the post's video, queued and owned by no run: the child workflow takes it when it starts. */
async function createTranscription(deps: Pick<Deps, 'orm' | 'jobs' | 'config'>, item: RecipeItem, title: string | undefined): Promise<string> {
  const id = randomUUID();
  await deps.jobs.create(deps.orm.em.fork(), {
    id,
    kind: TRANSCRIPTION_KIND,
    status: TRANSCRIPTION_STATUSES.queued,
    stage: 'queued',
    workflowId: deps.config.taskQueuePrefix + transcriptionWorkflowId(id),
    detail: { recipeItemId: item.jobId },
    within: async (tx) => {
      createTranscriptionRow(tx, id, { sourceKind: 'url', sourceUrl: item.url, mode: 'auto', ...(title?.trim() && { title }) });
      await tx.flush();
    },
  });
  return id;
}

/**
 * Starts the speech step: the extraction phase (again, when the model found no recipe in the caption) with its
 * `speech` step in progress; a video over RECIPE_SPEECH_MAX_SECONDS fails for good. Answers the transcription job:
 * one of the item's that finished (its transcript is reused), one an earlier attempt queued, or a new one.
 */
export async function recipeSpeechStart(deps: Deps, input: StepInput): Promise<SpeechStart> {
  const now = new Date().toISOString();
  await writeItem(deps, input, { stage: 'extraction', stageDetail: "Transcribing the video's speech", progress: overallProgress('extraction', false) }, (item) => {
    let phases = withPhase(item.phases, 'extraction', (p) => ({ ...p, status: 'in_progress', completedAt: undefined }));
    phases = withPhase(phases, 'parsing', (p) => ({ name: p.name, status: 'pending', progress: 0 }));
    item.phases = withStep(phases, 'extraction', { name: 'speech', status: 'in_progress', detail: "Transcribing the video's speech", startedAt: now });
  });
  const item = await loadRow(deps, input.itemId);
  const video = item.extraction?.video;
  if (!video) throw new PermanentError('The post has no video whose speech could be transcribed');
  const max = deps.config.recipes.speechMaxSeconds;
  if (video.seconds !== undefined && video.seconds > max) {
    throw new PermanentError(`The video is ${Math.round(video.seconds)} s long; RECIPE_SPEECH_MAX_SECONDS allows ${max} s of speech to be transcribed`);
  }
  if (!deps.config.transcription.asrBaseUrl) {
    throw new PermanentError("No transcription backend is configured for the video's speech: set ASR_BASE_URL (or RECIPE_SPEECH=off)");
  }
  const last = await lastTranscriptionOf(deps, input.itemId);
  let jobId: string;
  if (last?.status === TRANSCRIPTION_STATUSES.done) {
    jobId = last.id;
  } else if (last && last.status === TRANSCRIPTION_STATUSES.queued && !last.runId && !last.startedAt) {
    // An earlier attempt of this step queued it and did not get to start it.
    jobId = last.id;
  } else {
    jobId = await createTranscription(deps, item, item.extraction?.title);
  }
  await writeItem(deps, input, { stageDetail: `Transcribing the video's speech (transcription job ${jobId})` }, (row) => {
    row.phases = withStep(row.phases, 'extraction', { name: 'speech', status: 'in_progress', detail: `Transcribing the video's speech (transcription job ${jobId})`, startedAt: now });
    row.results = { ...row.results, transcriptionJobId: jobId };
  });
  if (last?.id === jobId && last.status === TRANSCRIPTION_STATUSES.done) return { kind: 'transcribed', jobId };
  return {
    kind: 'transcribe',
    jobId,
    workflowId: deps.config.taskQueuePrefix + transcriptionWorkflowId(jobId),
    taskQueue: taskQueue(deps.config, 'transcription'),
    input: workflowInput(deps.config, { id: jobId }, { sourceKind: 'url', mode: 'auto' }),
    subject: item.url,
  };
}

/** The transcript's text, a line per segment, cut at MAX_TEXT. */
function transcriptText(row: Transcription): string {
  let segments: unknown;
  try {
    segments = JSON.parse(row.segmentsJson ?? '[]');
  } catch {
    segments = [];
  }
  const lines = (Array.isArray(segments) ? segments : [])
    .map((s) => (s && typeof s === 'object' && typeof (s as { text?: unknown }).text === 'string' ? (s as { text: string }).text.trim() : ''))
    .filter(Boolean);
  return lines.join('\n').slice(0, MAX_TEXT);
}

/** Ends the speech step: the transcript joins the item's results (the model reads it) and extraction is completed. */
export async function recipeSpeechFinish(deps: Deps, input: StepInput & { jobId: string }): Promise<{ chars: number }> {
  const em = deps.orm.em.fork();
  const job = await em.findOne(Job, { id: input.jobId });
  const row = await em.findOne(Transcription, { jobId: input.jobId });
  if (!job || !row) throw new PermanentError(`The transcription job ${input.jobId} of the video's speech is gone`);
  if (job.status !== TRANSCRIPTION_STATUSES.done) {
    throw new PermanentError(`The transcription of the video's speech ended ${job.status}${job.error ? `: ${job.error}` : ''}`);
  }
  const transcript = transcriptText(row);
  const now = new Date().toISOString();
  const detail = transcript
    ? `Transcribed the video's speech (${row.transcriptSource === 'captions' ? "from the video's captions" : 'by the transcription backend'}; transcription job ${input.jobId})`
    : `The video has no speech to read (transcription job ${input.jobId})`;
  await writeItem(deps, input, { stageDetail: null, progress: overallProgress('extraction', true) }, (item) => {
    const started = item.phases.find((p) => p.name === 'extraction')?.steps?.find((s) => s.name === 'speech')?.startedAt;
    const phases = withStep(item.phases, 'extraction', { name: 'speech', status: 'completed', detail, ...(started && { startedAt: started }), completedAt: now });
    item.phases = withPhase(phases, 'extraction', (p) => ({ ...p, status: 'completed', completedAt: now, progress: 100 }));
    item.results = { ...item.results, transcript, transcriptionJobId: input.jobId };
  });
  deps.log.info("the video's speech was transcribed", { itemId: input.itemId, transcriptionJobId: input.jobId, chars: transcript.length });
  return { chars: transcript.length };
}

/** Failures of transcription's own workflow that another run may not meet (the backend's model, its webhook). */
const RECOVERABLE_CHILD_FAILURES = new Set(['ModelNotReady', 'WebhookTimeout']);

/**
 * Whether the child's failure was for good: its own verdicts by type; a failed step (`JobFailed`) by its last failed
 * activity in the child's history (a PermanentError, such as a removed or private video, or one whose attempts ran
 * out, such as an unreachable backend).
 */
async function failedForGood(deps: Pick<Deps, 'temporal' | 'log'>, input: SpeechFailureInput): Promise<boolean> {
  if (input.type && RECOVERABLE_CHILD_FAILURES.has(input.type)) return false;
  if (input.type && input.type !== 'JobFailed') return true;
  try {
    const history = await deps.temporal.workflow.getHandle(input.workflowId, input.childRunId).fetchHistory();
    for (const event of [...(history.events ?? [])].reverse()) {
      const failed = event.activityTaskFailedEventAttributes;
      if (!failed) continue;
      const info = failed.failure?.applicationFailureInfo;
      return Boolean(info?.nonRetryable) || info?.type === 'PermanentError';
    }
  } catch (err) {
    deps.log.warn("the transcription's history could not be read; its failure is taken as recoverable", { workflowId: input.workflowId, error: (err as Error).message });
  }
  return false;
}

/** The speech step failed: `error` when the transcription failed for good, `unhealthy` when a retry may succeed. */
export async function recipeSpeechFailed(deps: Deps, input: SpeechFailureInput): Promise<{ permanent: boolean; error: string }> {
  const permanent = await failedForGood(deps, input);
  const error = permanent
    ? `The video's speech could not be transcribed: ${input.message}`
    : `The video's speech could not be transcribed for now: ${input.message} (the item can be retried)`;
  return { permanent, error };
}
