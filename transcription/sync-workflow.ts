import { ApplicationFailure, type ActivityInterfaceFor, sleep } from '@temporalio/workflow';
import type { TranscriptionActivities } from './activities.js';
import type { RunRef, StageNote, SyncBackendKind, TranscriptionLimits } from './contract.js';

const note = (progress: number, stage: string, stageDetail: string | null = null): StageNote => ({ progress, stage, stageDetail });

type Steps = Pick<ActivityInterfaceFor<TranscriptionActivities>, 'transcriptionSplitAudio' | 'transcriptionTranscribeChunk' | 'transcriptionFinishChunks'>;

/**
 * The part of a transcription that a synchronous backend does (ASR_BACKEND openai, whisper-cpp, whisper-asr):
 *   split the prepared audio at silences into chunks the server takes -> each chunk to the backend in turn (its
 *   segments kept; 503 "model loading": wait Retry-After and send it again, at most TRANSCRIPTION_MAX_RESUBMITS
 *   times in a row) -> the segments stitched with their chunks' offsets into the transcript, and the job done.
 * Progress goes from 50 to 90 as chunks are sent. Cancelling the workflow cancels the chunk in flight, which
 * aborts its request. The transcription workflow passes its activity proxies: `media` for the split, `backend` (the
 * calls to the backend) for the chunks, `finalize` to finish. Answers the job's title for the notification, or
 * `stopped`.
 */
export async function transcribeSynchronously(
  ref: RunRef,
  input: { audio: string; backend: SyncBackendKind; limits: TranscriptionLimits },
  proxies: { media: Steps; backend: Steps; finalize: Steps },
): Promise<{ result: 'done'; title: string } | { result: 'stopped' }> {
  const { limits } = input;
  const { media, backend, finalize } = proxies;

  const { chunks, label } = await media.transcriptionSplitAudio({
    ...ref,
    audio: input.audio,
    backend: input.backend,
    note: note(40, 'submitting', `Preparing the audio for ${input.backend} (split at silences when it is long)`),
  });
  for (const [index, chunk] of chunks.entries()) {
    const which = chunks.length > 1 ? `chunk ${index + 1} of ${chunks.length}` : 'the audio';
    for (let resubmits = 0; ; resubmits++) {
      const answer = await backend.transcriptionTranscribeChunk({
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
  const done = await finalize.transcriptionFinishChunks({ ...ref, chunks, note: note(90, 'finalizing', 'Writing the transcript') });
  return done.result === 'done' ? { result: 'done', title: done.title } : { result: 'stopped' };
}
