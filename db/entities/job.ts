import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * A job of any of the three services (indexing, transcription, recipe). Each job is driven by one Temporal
 * workflow (`workflowId`); this row mirrors it so the API can answer and stream without asking Temporal.
 * `status` uses the service's own vocabulary (see jobs/kinds.ts); `detail` holds service-specific fields.
 */
export const Job = defineEntity({
  name: 'Job',
  tableName: 'job',
  properties: (p) => ({
    id: p.string().primary(),
    kind: p.string(),
    workflowId: p.string(),
    /** The workflow run that owns this job, the only one that writes to it (jobs/ownership.ts); null while none does. */
    runId: p.string().nullable(),
    status: p.string(),
    progress: p.integer().default(0),
    stage: p.string().nullable(),
    stageDetail: p.text().nullable(),
    error: p.text().nullable(),
    /** Extra event streams this job's events go to besides `job:<id>` and `kind:<kind>` (e.g. `repo:/owner/repo`). */
    topics: p.array().default([]),
    /** At most one unfinished job per key (enforced by a partial unique index). */
    activeKey: p.string().nullable(),
    detail: p.json<Record<string, unknown>>().default('{}' as never),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    startedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
  }),
  indexes: [
    { name: 'job_kind_status_index', properties: ['kind', 'status'] },
    { name: 'job_workflow_id_index', properties: ['workflowId'] },
    // Indexing jobs are listed and cancelled per library.
    {
      name: 'job_detail_repository_id_index',
      expression: `create index "job_detail_repository_id_index" on "job" (("detail"->>'repositoryId')) where "kind" = 'index'`,
    },
    // The reconciler scans unfinished jobs only.
    {
      name: 'job_unfinished_index',
      expression: 'create index "job_unfinished_index" on "job" ("created_at") where "completed_at" is null',
    },
  ],
  uniques: [
    // One unfinished job per key: the database backs up Temporal's workflow-id dedupe (docs/jobs.md, "Launching and retrying").
    {
      name: 'job_active_key_unique',
      expression:
        'create unique index "job_active_key_unique" on "job" ("active_key") where "completed_at" is null',
    },
  ],
});
export type Job = InferEntity<typeof Job>;
