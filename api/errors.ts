import type { Context, Next } from 'koa';
import { AppError, type ErrorDetail } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { redact } from '../core/redact.js';

/** What every failure becomes before it is written: the one mapping from error type to status and code. */
export interface HttpError {
  status: number;
  code: string;
  message: string;
  details?: ErrorDetail[];
}

/** Errors from body parsing (raw-body, co-body) carry a `type`; they are the client's fault. */
const PARSER_ERRORS: Record<string, Omit<HttpError, 'message'> & { message?: string }> = {
  'entity.too.large': { status: 413, code: 'PAYLOAD_TOO_LARGE' },
  'entity.parse.failed': { status: 400, code: 'INVALID_JSON', message: 'Request body is not valid JSON' },
  'encoding.unsupported': { status: 415, code: 'UNSUPPORTED_ENCODING' },
  'request.aborted': { status: 400, code: 'REQUEST_ABORTED' },
};

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
  if (e?.expose && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return { status: e.status, code: `HTTP_${e.status}`, message: String(e.message) };
  }
  // Unexpected: the message is kept (INTERNAL_ERROR carries it) but never a stack, and secrets are masked.
  return { status: 500, code: 'INTERNAL_ERROR', message: err instanceof Error ? err.message : 'Internal error' };
}

/** A route family may answer errors in another shape (Context7's `{error, message}`, webhooks' `{ok, error}`). */
export type ErrorFormatter = (e: HttpError) => unknown;

export const defaultErrorBody: ErrorFormatter = (e) => ({
  error: e.message,
  code: e.code,
  ...(e.details && { details: e.details }),
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
    } catch (err) {
      const e = toHttpError(err);
      e.message = redact(e.message);
      if (e.status >= 500) log.error('request failed', { method: ctx.method, path: ctx.path, error: err });
      if (ctx.respond === false || ctx.headerSent) return; // a stream already started; nothing more to say
      ctx.status = e.status;
      ctx.body = (ctx.state.formatError ?? defaultErrorBody)(e);
    }
  };
}
