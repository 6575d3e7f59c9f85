/**
 * The shared workflows every worker runs: the health ping, the concurrency pools and the hourly housekeeping. Each service's own are in its
 * folder (runtime/service.ts, `workflows`); runtime/worker.ts bundles them all. Keep workflow modules free of
 * side-effecting imports (docs/jobs.md, "Workflow code").
 */
export { housekeepingWorkflow } from './housekeeping.js';
export { pingWorkflow } from './health.js';
export { slotsWorkflow } from './slots.js';
