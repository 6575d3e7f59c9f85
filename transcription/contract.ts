/**
 * What the API, the workflow and the activities of transcription agree on. Pure (no imports with side effects):
 * the workflow bundle includes it.
 */
import type { AudioMode } from '../core/transcripts/audio.js';

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

export interface TranscriptionInput {
  jobId: string;
  sourceKind: SourceKind;
  mode: AudioMode;
  limits: TranscriptionLimits;
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
