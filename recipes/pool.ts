import type { SlotPoolSpec } from '../activities/slots.js';
import { RECIPE_KIND } from './contract.js';

/**
 * At most QUEUE_CONCURRENCY items are processed at once; with QUEUE_PROCESSING_ENABLED=false there are no slots,
 * so items are accepted and wait `pending`. A worker that starts applies its environment's limit (`configured`).
 */
export const recipesPool: SlotPoolSpec = {
  pool: 'recipes',
  kind: RECIPE_KIND,
  limit: (deps) => Promise.resolve(deps.config.recipes.processingEnabled ? deps.config.recipes.concurrency : 0),
  configured: true,
};
