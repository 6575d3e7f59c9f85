import { FakeAsr } from '../../fakes/fake-asr.js';
import { json, type Json } from './http.js';
import { wav } from '../../fakes/media.js';
import { freePort } from '../../fakes/ports.js';
import { FakePushService } from '../../fakes/push-service.js';
import { startTestStack, type TestStack } from './stack.js';
import { until } from './until.js';

/** A test stack for transcription: the API and transcription workers, a fake backend, a fake push service. */
export interface TranscriptionHarness {
  stack: TestStack;
  asr: FakeAsr;
  push: FakePushService;
  url: string;
  stop(): Promise<void>;
}

export async function startTranscriptionHarness(o: { env?: Record<string, string>; queues?: 'transcription'[] } = {}): Promise<TranscriptionHarness> {
  const [asr, push, port] = await Promise.all([FakeAsr.start(), FakePushService.start(), freePort()]);
  const stack = await startTestStack({
    queues: o.queues ?? ['transcription'],
    env: {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ASR_BASE_URL: asr.url,
      PUSH_CA_FILE: push.caFile,
      UPLOAD_MAX_BYTES: '400kb',
      TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS: '3000',
      TRANSCRIPTION_MODEL_WAIT_MAX_MS: '5000',
      TRANSCRIPTION_WEBHOOK_RESPONSE_MS: '15000',
      ...o.env,
    },
  });
  return {
    stack,
    asr,
    push,
    url: stack.url,
    stop: async () => {
      await stack.stop();
      await Promise.allSettled([asr.close(), push.close()]);
    },
  };
}

/** POST /api/jobs with a multipart upload. */
export async function uploadJob(
  url: string,
  file: { bytes: Buffer; name: string; type?: string },
  fields: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  form.set('file', new Blob([file.bytes], { type: file.type ?? 'audio/wav' }), file.name);
  const res = await fetch(`${url}/api/jobs`, { method: 'POST', body: form });
  return { status: res.status, body: await json(res) };
}

export const smallWav = (seconds = 2) => wav({ seconds, pauses: true });

export async function getJob(url: string, id: string): Promise<Json> {
  return json(await fetch(`${url}/api/jobs/${id}`));
}

/** Polls GET /api/jobs/:id until `pred` holds. */
export async function waitForJob(url: string, id: string, pred: (job: Json) => boolean, timeoutMs = 30_000): Promise<Json> {
  return until(() => getJob(url, id), pred, { timeoutMs, what: `job ${id}` });
}

export const isFinished = (job: Json) => ['done', 'failed', 'cancelled'].includes(job.status);
