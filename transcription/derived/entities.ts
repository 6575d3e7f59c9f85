import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * A translation or summary of a transcription job's transcript, beyond its own generic `job` row (status,
 * progress, error): which transcript, which task and language, and the result. One per transcript, task and
 * language (a unique index); asking again for one that failed runs it again.
 */
export const TranscriptExtra = defineEntity({
  name: 'TranscriptExtra',
  tableName: 'transcript_extra',
  properties: (p) => ({
    jobId: p.string().primary(),
    transcriptionJobId: p.string(),
    /** `translation` or `summary`. */
    task: p.string(),
    /** The target language of a translation; a summary's language, or null for the transcript's own. */
    language: p.string().nullable(),
    /** A translation's segments, or the summary with its chapters (JSON text), once done. */
    resultJson: p.text().nullable(),
    outputDir: p.text().nullable(),
    /** Lines or segments sent to the model, and the chunks they made. */
    units: p.integer().nullable(),
    chunks: p.integer().nullable(),
    runs: p.integer().default(1),
  }),
  indexes: [{ name: 'transcript_extra_transcription_job_id_index', properties: ['transcriptionJobId'] }],
  uniques: [
    {
      name: 'transcript_extra_unique',
      expression: `create unique index "transcript_extra_unique" on "transcript_extra" ("transcription_job_id", "task", coalesce("language", ''))`,
    },
  ],
});
export type TranscriptExtra = InferEntity<typeof TranscriptExtra>;
