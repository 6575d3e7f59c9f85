import { expect } from 'vitest';
import type { Json } from '../support/http.js';
import type { TestStack } from '../support/stack.js';
import { until } from '../support/until.js';

export const enc = encodeURIComponent;

export async function api(stack: TestStack, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const readJob = async (stack: TestStack, jobId: string): Promise<Json> => (await api(stack, 'GET', `/api/v1/jobs/${jobId}`)).body.job;

/** Polls a job until it has finished; fails the test with the job when it does not in time. */
export function waitForJob(stack: TestStack, jobId: string, timeoutMs = 60_000): Promise<Json> {
  return until(() => readJob(stack, jobId), (job) => job.status === 'done' || job.status === 'failed', { timeoutMs, what: `job ${jobId} finishing` });
}

export function waitForStatus(stack: TestStack, jobId: string, status: string, timeoutMs = 30_000): Promise<Json> {
  return until(() => readJob(stack, jobId), (job) => job.status === status, { timeoutMs, what: `job ${jobId} ${status}` });
}

export async function snippetsOf(stack: TestStack, repositoryId: string, versionId: string | null = null) {
  const rows: { file_path: string; type: string; title: string | null; content: string; breadcrumb: string | null }[] = await stack.orm.em
    .fork()
    .execute(
      `select d.file_path, s.type, s.title, s.content, s.breadcrumb from snippet s join library_document d on d.id = s.document_id
       where s.repository_id = ? and coalesce(s.version_id, '') = ? order by d.file_path, s.ordinal`,
      [repositoryId, versionId ?? ''],
    );
  return rows;
}

export function expectError(res: { status: number; body: Json }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.code).toBe(code);
  expect(typeof res.body.error).toBe('string');
}
