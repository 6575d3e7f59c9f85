/** Every workflow type; the workers bundle this file. Keep it free of side-effecting imports (docs/jobs.md, "Workflow code"). */
export { pingWorkflow } from './health.js';
export { slotsWorkflow } from './slots.js';
export { indexLibraryWorkflow } from './indexing.js';
export { transcriptionWorkflow } from './transcription.js';
export { recipeWorkflow } from './recipes.js';
