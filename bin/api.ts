/** `npm run api`: the HTTP API alone, attached to a running Temporal and PostgreSQL. */
import { runMain } from '../runtime/main.js';
import { startStack } from '../runtime/stack.js';

await runMain('gristmill-api', (config, log) => startStack({ config, log, api: true, queues: [], services: 'attach' }));
