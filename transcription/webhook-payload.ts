/**
 * What a call to the webhook means. The backend posts its job (`{id, status, error?, segments?}`) when the job
 * ends; some backends also post model-lifecycle notices (a model loading or warmed up) and progress notices to the
 * same URL. Only a job's end may change a job: everything else is acknowledged and ignored, so that a model
 * warm-up can never mark a job done.
 */
export type WebhookMeaning =
  | { kind: 'model-lifecycle' }
  | { kind: 'progress'; status: string }
  | { kind: 'failed'; status: string; error: string }
  | { kind: 'result'; status: string };

/** Statuses of a backend job that is still running: a progress notice. */
export const IN_PROGRESS_STATUSES = ['queued', 'pending', 'processing', 'running', 'in_progress', 'in-progress', 'started', 'transcribing'];
/** Statuses that fail the job (the spec's `failed` and `cancelled`; `canceled` too). */
export const FAILED_STATUSES = ['failed', 'cancelled', 'canceled'];

const MODEL = /^model(?:[._:\s-]|$)/i;

export function isModelLifecycle(body: Record<string, unknown>): boolean {
  for (const key of ['event', 'type', 'kind']) {
    const v = body[key];
    if (typeof v === 'string' && MODEL.test(v)) return true;
  }
  if (typeof body.status === 'string') return MODEL.test(body.status);
  // No job status at all, but a model or its state: a lifecycle notice.
  return 'model' in body || 'state' in body || 'model_state' in body;
}

/** The backend's id of the job a call is about (`id`, or `job_id` / `jobId`), if it says. */
export function backendJobId(body: Record<string, unknown>): string | null {
  for (const key of ['id', 'job_id', 'jobId']) {
    const v = body[key];
    if ((typeof v === 'string' && v.trim()) || typeof v === 'number') return String(v).trim();
  }
  return null;
}

/** Undefined when the body is not a backend job at all (no status, and not a lifecycle notice). */
export function classifyWebhook(body: Record<string, unknown>): WebhookMeaning | undefined {
  if (isModelLifecycle(body)) return { kind: 'model-lifecycle' };
  if (typeof body.status !== 'string' || !body.status.trim()) return undefined;
  const status = body.status.trim();
  const lower = status.toLowerCase();
  if (IN_PROGRESS_STATUSES.includes(lower)) return { kind: 'progress', status };
  if (FAILED_STATUSES.includes(lower)) {
    const error =
      typeof body.error === 'string' && body.error.trim()
        ? body.error.trim()
        : `The transcription backend reported the job ${lower === 'failed' ? 'failed' : 'cancelled'} (status "${status}")`;
    return { kind: 'failed', status, error };
  }
  return { kind: 'result', status };
}
