/**
 * What the API, the workflow and the activities of translations and summaries agree on. Pure: the workflow bundle
 * includes it.
 */
export const EXTRA_KIND = 'transcript-extra';
export const EXTRA_WORKFLOW = 'transcriptExtraWorkflow';

/** A translation of the transcript, or its summary with chapters. */
export type ExtraTask = 'translation' | 'summary';

export interface ExtraLimits {
  attempts: number;
  requestTimeoutMs: number;
  heartbeatTimeoutMs: number;
}

export interface ExtraInput {
  /** The translation's or summary's own job. */
  jobId: string;
  /** The transcription job whose transcript it is made of. */
  transcriptionJobId: string;
  task: ExtraTask;
  /** The target language (translations); a summary's language, or null for the transcript's own. */
  language: string | null;
  limits: ExtraLimits;
}

export const extraWorkflowId = (transcriptionJobId: string, task: ExtraTask, language: string | null) =>
  `transcript-${task}:${transcriptionJobId}${language ? `:${language}` : ''}`;
