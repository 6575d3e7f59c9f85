/** Every workflow type; the workers bundle this file. Keep it free of side-effecting imports (docs/jobs.md, "Workflow code"). */
export { pingWorkflow } from './health.js';
export { slotsWorkflow } from './slots.js';
export { indexLibraryWorkflow } from '../docindex/workflow.js';
export { transcriptionWorkflow } from '../transcription/workflow.js';
export { recipeWorkflow } from '../recipes/workflow.js';
