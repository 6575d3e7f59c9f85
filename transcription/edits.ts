import fs from 'node:fs/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../core/config.js';
import { ConflictError, NotFoundError } from '../core/errors.js';
import { Job } from '../db/entities/job.js';
import { subtitleRules } from './configuration.js';
import { Transcription } from './entities.js';
import { TRANSCRIPTION_STATUSES } from './kind.js';
import { stageFiles } from './results.js';
import type { NumberedSegment } from './transcripts/segments.js';
import { renderTranscript } from './transcripts/writers.js';

/**
 * A change to a finished transcript (speaker names, a corrected segment): under the job's lock (the one
 * jobs/store.ts takes, so a retry or cancel cannot interleave), the stored segments are changed, every result file
 * written again from them, and both replaced together: the files renamed into place inside the transaction, the
 * segments stored by it. A job that is not done is 409 TRANSCRIPT_NOT_READY and nothing changes.
 */
export async function editTranscript(
  d: { config: Config; em: () => EntityManager },
  jobId: string,
  change: (segments: NumberedSegment[]) => NumberedSegment[],
): Promise<NumberedSegment[]> {
  return d.em().transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`job:${jobId}`]);
    const job = await tx.findOne(Job, { id: jobId }, { refresh: true });
    const row = job && (await tx.findOne(Transcription, { jobId }, { refresh: true }));
    if (!job || !row) throw new NotFoundError(`Job ${jobId} not found`, 'JOB_NOT_FOUND');
    if (job.status !== TRANSCRIPTION_STATUSES.done || !row.outputDir) {
      throw new ConflictError(`Job ${jobId} has no transcript to change yet (it is ${job.status})`, 'TRANSCRIPT_NOT_READY');
    }
    const segments = change(row.segmentsJson ? (JSON.parse(row.segmentsJson) as NumberedSegment[]) : []);
    const files = renderTranscript(segments, {
      title: row.title,
      transcriptSource: row.transcriptSource ?? 'asr',
      sourceUrl: row.sourceUrl ?? null,
      createdAt: job.completedAt ?? new Date(),
      subtitles: subtitleRules(d.config.transcription),
    });
    const staging = await stageFiles(row.outputDir, files);
    try {
      await tx.nativeUpdate(Transcription, { jobId }, { segmentsJson: JSON.stringify(segments), segmentCount: segments.length });
      // Last: a failure before this rolls the segments back and leaves the old files.
      await fs.rm(row.outputDir, { recursive: true, force: true });
      await fs.rename(staging, row.outputDir);
    } finally {
      await fs.rm(staging, { recursive: true, force: true });
    }
    return segments;
  });
}
