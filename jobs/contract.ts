/**
 * What every service's workflows and activities agree on about jobs (docs/jobs.md). Pure, with no imports that have
 * side effects: the workflow bundle includes it.
 */
import { ActivityFailure, ApplicationFailure, defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';

/**
 * The failure type of "this workflow run no longer owns the job" (it ended, was cancelled through the API, or a retry
 * or a reset started another run): the run stops quietly and writes nothing more (jobs/ownership.ts).
 */
export const JOB_STOPPED = 'JobStopped';

/**
 * The failure type of "PostgreSQL cannot be reached": not a failure of the step, so it costs none of the step's
 * attempts. The workflow waits for the database and runs the step again (workflows/activities.ts).
 */
export const DATABASE_UNAVAILABLE = 'DatabaseUnavailable';

/** The type of the application failure at the root of a workflow-side failure (through activity failures). */
export function failureType(err: unknown): string | undefined {
  let e: unknown = err;
  while (e instanceof ActivityFailure) e = e.cause;
  return e instanceof ApplicationFailure ? (e.type ?? undefined) : undefined;
}

export const isJobStopped = (err: unknown): boolean => failureType(err) === JOB_STOPPED;


/**
 * Search attributes that make jobs easy to find in the Temporal UI, e.g.
 * `GristmillKind = "index" AND GristmillSubject = "/vercel/next.js"`, or `GristmillJobId = "<uuid>"`.
 * A workflow that starts a job's workflow as its child sets them too (recipes/workflow.ts).
 */
export const SEARCH_ATTRIBUTES = {
  jobId: defineSearchAttributeKey('GristmillJobId', SearchAttributeType.KEYWORD),
  kind: defineSearchAttributeKey('GristmillKind', SearchAttributeType.KEYWORD),
  subject: defineSearchAttributeKey('GristmillSubject', SearchAttributeType.KEYWORD),
};

/** A job's workflow's search attributes and memo. */
export function jobSearchAttributes(job: { id: string; kind: string }, subject: string) {
  return {
    typedSearchAttributes: new TypedSearchAttributes([
      { key: SEARCH_ATTRIBUTES.jobId, value: job.id },
      { key: SEARCH_ATTRIBUTES.kind, value: job.kind },
      { key: SEARCH_ATTRIBUTES.subject, value: subject.slice(0, 1000) },
    ]),
    memo: { jobId: job.id, kind: job.kind, subject },
  };
}
