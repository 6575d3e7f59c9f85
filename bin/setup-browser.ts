/** `npm run setup:browser`: finds Chromium for the browser tests, installing it with apt-get when it can. */
import { createLogger, type LogLevel } from '../core/log.js';
import { findChromium } from '../runtime/chromium.js';

const log = createLogger((process.env.LOG_LEVEL as LogLevel | undefined) ?? 'info', 'setup-browser');
try {
  const chromium = await findChromium(log, { explicit: process.env.CHROMIUM_PATH });
  log.info('chromium is ready', { path: chromium.path, version: chromium.version, source: chromium.source });
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
