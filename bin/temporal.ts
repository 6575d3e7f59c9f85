/** `npm run temporal`: only the Temporal dev server (found or obtained as `npm start` does), until Ctrl-C. */
import { runMain } from '../runtime/main.js';
import { provisionTemporal } from '../runtime/temporal.js';

await runMain('gristmill-temporal', async (config, log) => {
  const endpoint = await provisionTemporal({ ...config, temporalAddress: undefined }, log);
  log.info('Temporal dev server running; Ctrl-C stops it', { address: endpoint.address, ui: endpoint.uiUrl });
  return endpoint;
});
