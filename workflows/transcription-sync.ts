import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { RunRef, StageNote, TranscriptionActivities } from '../activities/transcription.js';
import type { SyncBackendKind, TranscriptionLimits } from '../transcription/contract.js';
import { externalCallRetry } from './retry-policy.js';

const note = (progress: number, stage: string, stageDetail: string | null = null): StageNote => ({ progress, stage, stageDetail });

/**
 * The part of a transcription that a synchronous backend does (ASR_BACKEND openai, whisper-cpp, whisper-asr):
 *   split the prepared audio at silences into chunks the server takes -> each chunk to the backend in turn (its
 *   segments kept; 503 "model loading": wait Retry-After and send it again, at most TRANSCRIPTION_MAX_RESUBMITS
 *   times in a row) -> the segments stitched with their chunks' offsets into the transcript, and the job done.
 * Progress goes from 50 to 90 as chunks are answered. Cancelling the workflow cancels the chunk in flight, which
 * aborts its request. Answers the job's title for the notification, or `stopped`.
 */
export async function transcribeSynchronously(
  ref: RunRef,
  input: { audio: { file: string; mode: string }; backend: SyncBackendKind; limits: TranscriptionLimits },
): Promise<{ result: 'done'; title: string } | { result: 'stopped' }> {
  const { limits } = input;
  const steps = proxyActivities<TranscriptionActivities>({
    startToCloseTimeout: limits.mediaTimeoutMs,
    heartbeatTimeout: limits.heartbeatTimeoutMs,
    retry: externalCallRetry(3),
  });
  const calls = proxyActivities<TranscriptionActivities>({
    startToCloseTimeout: limits.mediaTimeoutMs,
    heartbeatTimeout: limits.heartbeatTimeoutMs,
    retry: externalCallRetry(5),
  });
  const finish = proxyActivities<TranscriptionActivities>({
    startToCloseTimeout: '5 minutes',
    retry: externalCallRetry(3, { initialIntervalMs: 200 }),
  });

  const { chunks, label } = await steps.transcriptionSplitAudio({
    ...ref,
    audio: input.audio.file,
    backend: input.backend,
    note: note(40, 'submitting', `Splitting the ${input.audio.mode} audio for ${input.backend} at silences`),
  });
  for (const [index, chunk] of chunks.entries()) {
    const which = chunks.length > 1 ? `chunk ${index + 1} of ${chunks.length}` : 'the audio';
    for (let resubmits = 0; ; resubmits++) {
      const answer = await calls.transcriptionTranscribeChunk({
        ...ref,
        chunk,
        index,
        count: chunks.length,
        backend: input.backend,
        note: note(50 + Math.floor((40 * index) / chunks.length), 'transcribing', `Transcribing ${which} with ${label}`),
      });
      if (answer.kind === 'done') break;
      if (resubmits >= limits.maxResubmits) {
        throw ApplicationFailure.nonRetryable(
          `The transcription backend was still loading its model after ${resubmits + 1} requests`,
          'ModelNotReady',
        );
      }
      await sleep(Math.min(Math.max(0, answer.retryAfterMs), limits.modelWaitMaxMs));
    }
  }
  const done = await finish.transcriptionFinishChunks({ ...ref, chunks, note: note(90, 'finalizing', 'Writing the transcript') });
  return done.result === 'done' ? { result: 'done', title: done.title } : { result: 'stopped' };
}
