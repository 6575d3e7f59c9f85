import fs from 'node:fs';
import { PermanentError, RecoverableError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';
import { retryAfterMs } from '../../core/retry-after.js';
import { DEFAULT_RETRY_AFTER_MS } from '../asr-client.js';
import type { AudioFile, CallOptions } from './types.js';

/**
 * The HTTP every synchronous backend shares: one multipart POST per call (a fresh body and file stream each time,
 * so a retry never reuses a consumed stream), ended by the job's cancellation or the request's time limit, and one
 * reading of the answer:
 *
 * - 2xx: the JSON body (whisper-asr-webservice sends it as text/plain);
 * - 503: the model is loading or the server is overloaded: `busy`, with Retry-After (5 s when it gives none);
 * - 408, 425, 429 and other 5xx: RecoverableError with Retry-After (Temporal retries the call after that long),
 *   but a 429 about an exhausted quota, which no wait fixes, is permanent;
 * - other 4xx: PermanentError, with a hint at the setting to check.
 */
export interface RawAnswer {
  status: number;
  text: string;
  retryAfter: string | null;
}

export type Answer = { kind: 'json'; body: unknown } | { kind: 'busy'; retryAfterMs: number };

const WHAT = 'The transcription backend';

function cause(err: unknown): string {
  const c = (err as { cause?: { code?: string; message?: string } }).cause;
  return redact(c?.code ?? c?.message ?? (err as Error).message);
}

export async function postAudio(
  url: string,
  audio: AudioFile,
  fileField: string,
  fields: [string, string][],
  o: CallOptions & { apiKey: string | undefined },
): Promise<RawAnswer> {
  const form = new FormData();
  form.set(fileField, await fs.openAsBlob(audio.path, { type: 'audio/wav' }), audio.name);
  for (const [name, value] of fields) form.append(name, value);
  const timeout = AbortSignal.timeout(o.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      body: form,
      headers: { accept: 'application/json', ...(o.apiKey && { authorization: `Bearer ${o.apiKey}` }) },
      signal: AbortSignal.any([o.signal, timeout]),
    });
  } catch (err) {
    if (o.signal.aborted) throw o.signal.reason ?? err;
    if (timeout.aborted) throw timedOut(o);
    throw new RecoverableError(`${WHAT} at ${new URL(url).origin} is unreachable: ${cause(err)}`);
  }
  let text: string;
  try {
    text = await readLimited(res, MAX_ANSWER_BYTES);
  } catch (err) {
    if (o.signal.aborted) throw o.signal.reason ?? err;
    if (err instanceof PermanentError) throw err;
    // The time limit covers the answer's body too: a server that stops sending has not answered in time.
    if (timeout.aborted) throw timedOut(o);
    throw new RecoverableError(`${WHAT} broke off its answer: ${cause(err)}`);
  }
  return { status: res.status, text, retryAfter: res.headers.get('retry-after') };
}

/** A transcript of a chunk is kilobytes to a few megabytes (with words); far more is not one. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

const timedOut = (o: CallOptions) => new RecoverableError(`${WHAT} did not answer within ${o.timeoutMs} ms (TRANSCRIPTION_MEDIA_TIMEOUT_MS)`);

async function readLimited(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return '';
  const body: AsyncIterable<Uint8Array> = res.body;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await res.body.cancel().catch(() => undefined);
      throw new PermanentError(`${WHAT} answered more than ${maxBytes} bytes for one chunk of audio`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The error message a server put in its body: OpenAI's `{error: {message}}`, `{error: "..."}`, FastAPI's `{detail}`. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; detail?: unknown; message?: unknown };
    const e = body.error;
    const m = typeof e === 'string' ? e : e && typeof e === 'object' ? (e as { message?: unknown }).message : (body.detail ?? body.message);
    if (typeof m === 'string' && m.trim()) return m.trim();
    if (m !== undefined) return JSON.stringify(m);
  } catch {
    /* not JSON: the text itself */
  }
  return text.replace(/\s+/g, ' ').trim();
}

/** The server's message, short and secret-free, for errors. */
export function excerpt(text: string): string {
  const m = errorMessage(text);
  return redact(m.length > 300 ? `${m.slice(0, 300)}...` : m);
}

/** The answer as the caller needs it: the JSON of a 2xx, `busy` for a 503, or the failure (thrown). */
export function readAnswer(raw: RawAnswer): Answer {
  if (raw.status === 503) return { kind: 'busy', retryAfterMs: retryAfterMs(raw.retryAfter) ?? DEFAULT_RETRY_AFTER_MS };
  if (raw.status < 200 || raw.status >= 300) throw failure(raw);
  try {
    return { kind: 'json', body: JSON.parse(raw.text) as unknown };
  } catch {
    throw new RecoverableError(`${WHAT} answered ${raw.status} without JSON: ${excerpt(raw.text) || '(an empty body)'}`);
  }
}

function failure(raw: RawAnswer): Error {
  const detail = excerpt(raw.text);
  const message = `${WHAT} answered ${raw.status}${detail ? `: ${detail}` : ''}`;
  const s = raw.status;
  // Not every 429 that mentions billing: Groq's rate limits link to its billing page.
  if (s === 429 && /insufficient_quota|exceeded your current quota/i.test(raw.text)) {
    return new PermanentError(`${message} (the account's quota is used up: check its plan and billing)`);
  }
  if (s === 408 || s === 425 || s === 429 || s >= 500) return new RecoverableError(message, retryAfterMs(raw.retryAfter));
  const hint =
    s === 401 || s === 403
      ? ' (check ASR_API_KEY)'
      : s === 404
        ? ' (check ASR_BASE_URL, ASR_BACKEND and ASR_MODEL)'
        : s === 413
          ? ' (the audio is over the server\'s size limit: lower ASR_CHUNK_MAX_BYTES)'
          : '';
  return new PermanentError(`${message}${hint}`);
}
