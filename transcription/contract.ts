/**
 * What the API, the workflow and the activities of transcription agree on. Pure (no imports with side effects):
 * the workflow bundle includes it.
 */
import type { AsrBackendKind } from './configuration.js';
import type { AudioMode } from './transcripts/audio.js';

/** The job kind of a transcription (jobs/kinds.ts); here so workflows can name it. */
export const TRANSCRIPTION_KIND = 'transcription';
export const TRANSCRIPTION_WORKFLOW = 'transcriptionWorkflow';
/** The signal that carries a webhook call to its job's workflow. */
export const ASR_WEBHOOK_SIGNAL = 'asrWebhook';

export type SourceKind = 'url' | 'upload' | 'recording';

/** Every timeout and bound comes in from configuration (docs/jobs.md, "Workflow code"), so tests can use short ones. */
export interface TranscriptionLimits {
  modelWaitMaxMs: number;
  maxResubmits: number;
  webhookTimeoutMs: number;
  heartbeatTimeoutMs: number;
  mediaTimeoutMs: number;
}

/** Backends that answer each request with the transcript, with no webhook: the workflow's synchronous branch. */
export type SyncBackendKind = Exclude<AsrBackendKind, 'callback'>;
export const isSyncBackend = (kind: AsrBackendKind | undefined): kind is SyncBackendKind => kind !== undefined && kind !== 'callback';

export interface TranscriptionInput {
  jobId: string;
  sourceKind: SourceKind;
  mode: AudioMode;
  /** ASR_BACKEND when the job (or its retry) started; absent in runs started before it existed: `callback`. */
  backend?: AsrBackendKind;
  limits: TranscriptionLimits;
  /** TRANSCRIPTION_SUMMARY when the job (or its retry) started: a summary is asked for once it is done. */
  summaryForEveryJob?: boolean;
}

/** The patch that asks for a summary after a job is done (runs started before it never do). */
export const SUMMARY_FOR_EVERY_JOB_PATCH = 'summary-for-every-job';

/** The run a step works for: each activity refuses a job its run no longer owns (jobs/ownership.ts). */
export interface RunRef {
  jobId: string;
  runId: string;
}

/** The stage a step reports when it starts (progress, stage name, detail): published as a `status` event. */
export interface StageNote {
  progress: number;
  stage: string;
  stageDetail: string | null;
}

/** A webhook call stored by the API (`transcription_webhook` row `deliveryId`); the payload stays in PostgreSQL. */
export interface WebhookNotice {
  deliveryId: string;
  /** The backend's job id the call names, if it names one. */
  asrJobId: string | null;
}

export interface TranscriptionResult {
  outcome: 'done' | 'stopped';
  transcriptSource?: 'captions' | 'asr';
  asrJobId?: string;
}

export const workflowIdFor = (jobId: string) => `transcription:${jobId}`;

/** A playlist's expansion into jobs (transcription/playlist-activities.ts, `transcriptionPlaylistWorkflow`). */
export const TRANSCRIPTION_PLAYLIST_WORKFLOW = 'transcriptionPlaylistWorkflow';
export const playlistWorkflowIdFor = (groupId: string) => `transcription-playlist:${groupId}`;

export interface PlaylistInput {
  groupId: string;
  limits: Pick<TranscriptionLimits, 'heartbeatTimeoutMs' | 'mediaTimeoutMs'>;
}
