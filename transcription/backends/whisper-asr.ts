import { RecoverableError } from '../../core/errors.js';
import type { SyncBackend, SyncEndpoint } from './types.js';
import { excerpt, postAudio, readAnswer } from './http.js';
import { segmentsFromAnswer } from './segments.js';

/**
 * whisper-asr-webservice: `POST {base}/asr?encode=true&task=transcribe&output=json` (plus `&language=` when
 * ASR_LANGUAGE is set, `&word_timestamps=true` unless ASR_WORD_TIMESTAMPS=false, `&diarize=true` when ASR_DIARIZE
 * is set), multipart `audio_file`. The answer is Whisper's result as JSON (served as text/plain):
 * `{text, segments: [{id, seek, start, end, text, words?: [{word, start, end, probability}], ...}], language}`,
 * times in seconds. With its WhisperX engine and `diarize=true` each segment (and word) also has `speaker`
 * (`SPEAKER_00`, ...); the other engines ignore `diarize`. The server runs the model and engine it was started
 * with (its ASR_MODEL and ASR_ENGINE); Gristmill's ASR_MODEL only names it on the job.
 */
export function whisperAsrBackend(e: SyncEndpoint): SyncBackend {
  const query = new URLSearchParams({
    encode: 'true',
    task: 'transcribe',
    output: 'json',
    ...(e.language && { language: e.language }),
    ...(e.words && { word_timestamps: 'true' }),
    ...(e.diarize && { diarize: 'true' }),
  });
  const url = `${e.baseUrl}/asr?${query}`;
  return {
    kind: 'whisper-asr',
    async transcribe(audio, o) {
      const answer = readAnswer(await postAudio(url, audio, 'audio_file', [], { ...o, apiKey: e.apiKey }));
      if (answer.kind === 'busy') return answer;
      const segments = segmentsFromAnswer(answer.body, audio.seconds);
      if (!segments) throw new RecoverableError(`The transcription backend answered without segments or text: ${excerpt(JSON.stringify(answer.body))}`);
      return { kind: 'segments', segments };
    },
  };
}
