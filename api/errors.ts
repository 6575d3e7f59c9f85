import { isGrpcServiceError } from '@temporalio/client';
import type { Context, Next } from 'koa';
import { AppError, type ErrorDetail, UnavailableError } from '../core/errors.js';
import { type Logger, logUnexpected } from '../core/log.js';
import { redact } from '../core/redact.js';
import { isDatabaseUnavailable } from '../db/errors.js';

/** What every failure becomes before it is written: the one mapping from error type to status and code. */
export interface HttpError {
  status: number;
  code: string;
  message: string;
  details?: ErrorDetail[];
  /** Unexpected failures only: the id of the log line that has the whole story. */
  errorId?: string;
}

/** Errors from body parsing (raw-body, co-body) carry a `type`; they are the client's fault. */
const PARSER_ERRORS: Record<string, Omit<HttpError, 'message'> & { message?: string }> = {
  'entity.too.large': { status: 413, code: 'PAYLOAD_TOO_LARGE' },
  'entity.parse.failed': { status: 400, code: 'INVALID_JSON', message: 'Request body is not valid JSON' },
  'encoding.unsupported': { status: 415, code: 'UNSUPPORTED_ENCODING' },
  'request.aborted': { status: 400, code: 'REQUEST_ABORTED' },
};

/** gRPC's UNAVAILABLE and DEADLINE_EXCEEDED: the Temporal server cannot be reached, or did not answer in time. */
const TEMPORAL_UNREACHABLE = new Set([14, 4]);
/** What a 503 for a dependency asks a client to wait: an outage worth a 503 lasts seconds to minutes. */
const DEPENDENCY_RETRY_AFTER_S = 5;

function temporalUnreachable(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 5) return false;
  if (isGrpcServiceError(err) && TEMPORAL_UNREACHABLE.has(err.code)) return true;
  return temporalUnreachable(err.cause, depth + 1);
}

/**
 * A failure that only says a dependency cannot be reached right now (PostgreSQL stopped or restarting, its pool
 * exhausted; the Temporal server down or not answering: the client retries for about 18 s first), as the 503 it
 * is, with a code of its own and Retry-After, rather than an unexpected 500. Requests answered by the API and by
 * MCP's tools go through here; an error the code already named (AppError) is left as it is.
 */
export function asUnavailable(err: unknown): UnavailableError | undefined {
  if (err instanceof AppError) return undefined;
  if (temporalUnreachable(err)) return new UnavailableError('The Temporal server cannot be reached right now; try again shortly', 'TEMPORAL_UNAVAILABLE', DEPENDENCY_RETRY_AFTER_S);
  if (isDatabaseUnavailable(err)) return new UnavailableError('The database cannot be reached right now; try again shortly', 'DATABASE_UNAVAILABLE', DEPENDENCY_RETRY_AFTER_S);
  return undefined;
}

export function toHttpError(err: unknown): HttpError {
  if (err instanceof AppError) {
    return { status: err.status, code: err.code, message: err.message, ...(err.details && { details: err.details }) };
  }
  const e = err as { type?: string; status?: number; expose?: boolean; message?: string; limit?: number };
  // co-body reports unparsable JSON as a SyntaxError with status 400 and no type.
  if (err instanceof SyntaxError && e.status === 400) return { status: 400, code: 'INVALID_JSON', message: 'Request body is not valid JSON' };
  const parser = e?.type ? PARSER_ERRORS[e.type] : undefined;
  if (parser) {
    const message =
      parser.message ?? (e.type === 'entity.too.large' ? `Request body is larger than the limit of ${e.limit} bytes` : String(e.message));
    return { status: parser.status, code: parser.code, message };
  }
  // A body whose Content-Encoding is unknown (inflation's 415) or whose compressed data is broken (zlib's codes).
  if (e?.status === 415 && /Content-Encoding/.test(String(e.message))) return { status: 415, code: 'UNSUPPORTED_ENCODING', message: String(e.message) };
  if (typeof (e as { code?: unknown })?.code === 'string' && /^(Z_|ERR__ERROR)/.test((e as { code: string }).code)) {
    return { status: 400, code: 'INVALID_CONTENT_ENCODING', message: 'The request body is not valid data for its Content-Encoding' };
  }
  if (e?.expose && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return { status: e.status, code: `HTTP_${e.status}`, message: String(e.message) };
  }
  // Unexpected: its message may hold SQL, a path, an upstream's answer or a secret, so the client gets a generic one
  // and an id (errorHandler), and the log line with the same id has the message and the stack.
  return { status: 500, code: 'INTERNAL_ERROR', message: 'Internal error' };
}

/** A route family may answer errors in another shape (Context7's `{error, message}`, webhooks' `{ok, error}`). */
export type ErrorFormatter = (e: HttpError) => unknown;

/** Error bodies in another shape for the routes under `prefix` (Context7's `/api/v2/`), auth failures included. */
export interface ErrorFormat {
  prefix: string;
  format: ErrorFormatter;
}

export const defaultErrorBody: ErrorFormatter = (e) => ({
  error: e.message,
  code: e.code,
  ...(e.details && { details: e.details }),
  ...(e.errorId && { errorId: e.errorId }),
});

declare module 'koa' {
  interface DefaultState {
    formatError?: ErrorFormatter;
  }
}

export function errorHandler(log: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      // The router answers an unknown path (404) or a wrong method (405, with Allow) without a body.
      if (ctx.status >= 400 && ctx.body == null && ctx.respond !== false) {
        const e: HttpError =
          ctx.status === 404
            ? { status: 404, code: 'ROUTE_NOT_FOUND', message: `No route for ${ctx.method} ${ctx.path}` }
            : ctx.status === 405
              ? {
                  status: 405,
                  code: 'METHOD_NOT_ALLOWED',
                  message: `${ctx.method} is not allowed on ${ctx.path}; use ${ctx.response.get('Allow')}`,
                }
              : { status: ctx.status, code: `HTTP_${ctx.status}`, message: ctx.message };
        ctx.status = e.status;
        ctx.body = (ctx.state.formatError ?? defaultErrorBody)(e);
      }
    } catch (thrown) {
      const dependency = asUnavailable(thrown);
      const err = dependency ?? thrown;
      const e = toHttpError(err);
      e.message = redact(e.message);
      if (e.code === 'INTERNAL_ERROR') {
        e.errorId = logUnexpected(log, 'request failed', err, { method: ctx.method, path: ctx.path });
        e.message = `Internal error (logged as ${e.errorId})`;
      } else if (e.status >= 500) {
        const cause = dependency && { cause: redact(thrown instanceof Error ? thrown.message : String(thrown)) };
        log.error('request failed', { method: ctx.method, path: ctx.path, error: e.message, ...cause });
      }
      if (ctx.headerSent) {
        // A stream already started: nothing more can be said, but the response must end (the client resumes).
        if (!ctx.res.writableEnded) ctx.res.end();
        return;
      }
      // A handler that meant to write the response itself (an event stream, MCP) failed before it did: answer for it.
      ctx.respond = true;
      ctx.status = e.status;
      if (err instanceof UnavailableError && err.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(err.retryAfterSeconds));
      ctx.body = (ctx.state.formatError ?? defaultErrorBody)(e);
    }
  };
}
