import { randomUUID } from 'node:crypto';
import { redact } from './redact.js';

/** A small structured logger: one line per record, secrets redacted. Level from LOG_LEVEL. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

function format(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/**
 * An unexpected failure: logged once, with its stack, under a new id that the answer carries instead of the message
 * (which may hold SQL, a path, an upstream's answer). Returns the id.
 */
export function logUnexpected(log: Logger, msg: string, err: unknown, fields: Record<string, unknown> = {}): string {
  const errorId = randomUUID();
  const { message, stack } = err instanceof Error ? err : { message: String(err), stack: undefined };
  log.error(msg, { errorId, ...fields, error: message, stack });
  return errorId;
}

export function createLogger(level: LogLevel = 'info', scope = 'gristmill'): Logger {
  const write = (at: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[at] < ORDER[level]) return;
    const extra = fields
      ? ' ' + Object.entries(fields).map(([k, v]) => `${k}=${format(v)}`).join(' ')
      : '';
    const line = `${new Date().toISOString()} ${at.toUpperCase().padEnd(5)} [${scope}] ${msg}${extra}`;
    (at === 'error' || at === 'warn' ? process.stderr : process.stdout).write(redact(line) + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (child) => createLogger(level, `${scope}:${child}`),
  };
}
