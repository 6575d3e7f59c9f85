/** `npm start`: PostgreSQL, the Temporal dev server, the API and all workers in one process tree. */
import { TASK_QUEUE_NAMES } from '../runtime/services.js';
import { runMain } from '../runtime/main.js';
import { startStack } from '../runtime/stack.js';

await runMain('gristmill', async (config, log) => {
  const stack = await startStack({ config, log, api: true, queues: TASK_QUEUE_NAMES, services: 'embedded' });
  log.info('Gristmill is up', {
    api: stack.api?.url,
    webInterface: stack.api && `${stack.api.url}/`,
    temporalUi: stack.temporalUiUrl ?? `(external Temporal at ${config.temporalAddress})`,
    dataDir: config.dataDir,
  });
  return stack;
});
