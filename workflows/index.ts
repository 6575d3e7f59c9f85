/** Every workflow type; the workers bundle this file. Keep it free of side-effecting imports (engineering note 1). */
export { pingWorkflow } from './health.js';
export { slotsWorkflow } from './slots.js';
export { indexLibraryWorkflow } from './indexing.js';
export { transcriptionWorkflow } from './transcription.js';
export { recipeWorkflow } from './recipes.js';
