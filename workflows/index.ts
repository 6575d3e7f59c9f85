/**
 * The shared workflows every worker runs: the health ping and the concurrency pools. Each service's own are in its
 * folder (runtime/service.ts, `workflows`); runtime/worker.ts bundles them all. Keep workflow modules free of
 * side-effecting imports (docs/jobs.md, "Workflow code").
 */
export { pingWorkflow } from './health.js';
export { slotsWorkflow } from './slots.js';
