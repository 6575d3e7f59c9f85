/** `npm run worker -- --queues indexing`: workers for some or all task queues, attached to running services. */
import { TASK_QUEUE_NAMES } from '../runtime/services.js';
import { parseQueues, runMain } from '../runtime/main.js';
import { startStack } from '../runtime/stack.js';

await runMain('gristmill-worker', (config, log) =>
  startStack({ config, log, api: false, queues: parseQueues(process.argv.slice(2), TASK_QUEUE_NAMES), services: 'attach' }),
);
