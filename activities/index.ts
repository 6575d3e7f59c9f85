import type { QueueName } from '../core/config.js';
import type { ActivityDeps } from './deps.js';
import { createHealthActivities } from './health.js';
import { createIndexingActivities } from '../docindex/activities.js';
import { indexingPool } from '../docindex/pool.js';
import { createJobActivities } from './jobs.js';
import { createPushActivities } from './push.js';
import { createRecipeActivities } from '../recipes/activities.js';
import { recipesPool } from '../recipes/pool.js';
import { createSlotActivities } from './slots.js';
import { createTranscriptionActivities } from '../transcription/activities.js';

/**
 * The activities each task queue's worker registers: the shared ones (health ping, job bookkeeping) everywhere,
 * plus the service's own. Services add theirs here as they land.
 */
export function activitiesFor(queue: QueueName, deps: ActivityDeps): Record<string, (...args: never[]) => unknown> {
  return {
    ...createHealthActivities(),
    ...createJobActivities(deps),
    ...createSlotActivities(deps, [indexingPool, recipesPool]),
    ...(queue === 'indexing' && createIndexingActivities(deps)),
    ...(queue === 'transcription' && createTranscriptionActivities(deps)),
    ...(queue === 'recipes' && createRecipeActivities(deps)),
    ...((queue === 'transcription' || queue === 'recipes') && createPushActivities(deps)),
  };
}
