import fs from 'node:fs';
import { PermanentError } from '../core/errors.js';
import { redact } from '../core/redact.js';
import { retryAfterMs } from '../core/retry-after.js';

/**
 * The transcription backend's HTTP contract, as Gristmill speaks it (docs/transcription.md, "The transcription backend"):
 *
 * - `POST {ASR_BASE_URL}/jobs`, multipart/form-data with fields `file` (the audio: 16 kHz mono WAV),
 *   `callback_url` (where to post the finished job) and `external_id` (our job id, for the backend's logs):
 *   2xx `{id}` (or `job_id`) accepted; 503 with `Retry-After` while the model loads; other 4xx permanent.
 * - `GET {ASR_BASE_URL}/model/events`: server-sent events of the model's lifecycle; a message whose JSON data has
 *   `state: "ready"` (or whose event name is `ready`) means the model is loaded.
 * - `DELETE {ASR_BASE_URL}/jobs/:id`: cancel a job.
 * - the backend posts its job `{id, status, error?, segments?}` to the callback URL when the job ends.
 * With ASR_API_KEY set, every request carries `Authorization: Bearer <key>`.
 */
export interface AsrEndpoint {
  baseUrl: string;
  apiKey?: string | undefined;
}

export type SubmitOutcome = { kind: 'accepted'; asrJobId: string } | { kind: 'busy'; retryAfterMs: number };

/** When a 503 has no usable Retry-After. */
export const DEFAULT_RETRY_AFTER_MS = 5000;

function headers(e: AsrEndpoint): Record<string, string> {
  return e.apiKey ? { Authorization: `Bearer ${e.apiKey}` } : {};
}

const describe = (err: unknown) => redact((err as Error & { cause?: Error }).cause?.message ?? (err as Error).message);

/**
 * One submission. The multipart body and the file stream are built here, per call: a resubmission never reuses a
 * consumed stream.
 */
export async function submitJob(
  e: AsrEndpoint,
  o: {
    file: string;
    fileName: string;
    contentType: string;
    callbackUrl: string;
    externalId: string;
    signal?: AbortSignal;
    /** Bytes of the file sent so far, as they go: the step's progress. */
    onProgress?: (bytesSent: number) => void;
  },
): Promise<SubmitOutcome> {
  const form = new FormData();
  const blob = await fs.openAsBlob(o.file, { type: o.contentType });
  // A File with its name is taken as it is (a file name given here would wrap it in another File, uncounted).
  if (o.onProgress) form.set('file', new CountedFile(blob, o.fileName, o.onProgress));
  else form.set('file', blob, o.fileName);
  form.set('callback_url', o.callbackUrl);
  form.set('external_id', o.externalId);
  let res: Response;
  try {
    res = await fetch(`${e.baseUrl}/jobs`, { method: 'POST', body: form, headers: headers(e), ...(o.signal && { signal: o.signal }) });
  } catch (err) {
    if (o.signal?.aborted) throw err;
    throw new Error(`The transcription backend at ${e.baseUrl} is unreachable: ${describe(err)}`);
  }
  const text = await res.text().catch(() => '');
  if (res.status === 503) {
    return { kind: 'busy', retryAfterMs: retryAfterMs(res.headers.get('retry-after')) ?? DEFAULT_RETRY_AFTER_MS };
  }
  if (!res.ok) {
    const message = `The transcription backend refused the job: HTTP ${res.status} ${redact(text.slice(0, 300))}`.trim();
    // 408 and 429 and 5xx may pass; other client errors will not.
    if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) throw new PermanentError(message);
    throw new Error(message);
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`The transcription backend answered ${res.status} without JSON`);
  }
  const id = body.id ?? body.job_id ?? body.jobId;
  if ((typeof id !== 'string' || !id) && typeof id !== 'number') {
    throw new PermanentError(`The transcription backend accepted the job without a job id: ${redact(text.slice(0, 200))}`);
  }
  return { kind: 'accepted', asrJobId: String(id) };
}

/** A file part whose stream reports the bytes read from it: fetch reads it as it sends the body. */
class CountedFile extends File {
  constructor(
    blob: Blob,
    name: string,
    private readonly onProgress: (bytesSent: number) => void,
  ) {
    super([blob], name, { type: blob.type });
  }

  override stream(): ReturnType<Blob['stream']> {
    let sent = 0;
    const report = this.onProgress;
    return super.stream().pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          sent += chunk.byteLength;
          report(sent);
          controller.enqueue(chunk);
        },
      }),
    ) as ReturnType<Blob['stream']>;
  }
}

export type ModelWaitOutcome = 'ready' | 'closed' | 'unreachable' | 'timeout';

/** True for a model-events message that says the model is loaded. */
export function isReadyMessage(event: string | undefined, data: string): boolean {
  if (event === 'ready') return true;
  try {
    const parsed = JSON.parse(data) as { state?: unknown; status?: unknown };
    return parsed.state === 'ready' || parsed.status === 'ready';
  } catch {
    return data.trim() === 'ready';
  }
}

/**
 * Follows `GET /model/events` until a `ready` message ('ready'), the stream ends without one ('closed'), it cannot
 * be opened ('unreachable'), or `maxWaitMs` passes ('timeout'). `onMessage` sees every message (for heartbeats
 * and progress). Cancelled by `signal`, which then rejects.
 */
export async function waitForModel(
  e: AsrEndpoint,
  o: { maxWaitMs: number; signal: AbortSignal; onMessage?: (m: { event?: string; data: string }) => void },
): Promise<ModelWaitOutcome> {
  const local = new AbortController();
  const timer = setTimeout(() => local.abort(new Error('timeout')), o.maxWaitMs);
  const onCancel = () => local.abort(o.signal.reason);
  o.signal.addEventListener('abort', onCancel, { once: true });
  try {
    let res: Response;
    try {
      res = await fetch(`${e.baseUrl}/model/events`, {
        headers: { Accept: 'text/event-stream', ...headers(e) },
        signal: local.signal,
      });
    } catch (err) {
      if (o.signal.aborted) throw err;
      return local.signal.aborted ? 'timeout' : 'unreachable';
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      return 'unreachable';
    }
    const decoder = new TextDecoder();
    const body: AsyncIterable<Uint8Array> = res.body;
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
        let at: number;
        while ((at = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          let event: string | undefined;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (!data.length && event === undefined) continue; // a comment or heartbeat
          const message = { ...(event !== undefined && { event }), data: data.join('\n') };
          o.onMessage?.(message);
          if (isReadyMessage(event, message.data)) return 'ready';
        }
      }
    } catch (err) {
      if (o.signal.aborted) throw err;
      return local.signal.aborted ? 'timeout' : 'closed';
    }
    return 'closed';
  } finally {
    clearTimeout(timer);
    o.signal.removeEventListener('abort', onCancel);
    local.abort();
  }
}

/** Asks the backend to cancel a job. Best effort: answers whether the backend confirmed, never throws. */
export async function cancelBackendJob(e: AsrEndpoint, asrJobId: string, timeoutMs = 10_000): Promise<{ ok: boolean; detail: string }> {
  try {
    const res = await fetch(`${e.baseUrl}/jobs/${encodeURIComponent(asrJobId)}`, {
      method: 'DELETE',
      headers: headers(e),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    return { ok: res.ok, detail: `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, detail: describe(err) };
  }
}
