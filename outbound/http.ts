import { fetch as guardedFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { PermanentError, RecoverableError } from '../core/errors.js';
import { redact } from '../core/redact.js';
import { retryAfterMs } from '../core/retry-after.js';
import { isAddressRefusal, type OutboundGuard, refused } from './guard.js';

/**
 * HTTP for activities (the recipe phases, package registries, documentation sites): every call ends by the attempt's
 * deadline or when the activity is cancelled, and every failure is classified. Recoverable (another attempt may succeed): network errors, timeouts,
 * 408, 425, 429 and 5xx (with the server's Retry-After). Permanent (the same request would fail again): other 4xx.
 */
export { RecoverableError };

/** The attempt a call belongs to: its cancellation, and when it must be over (ms since the epoch). */
export interface CallContext {
  signal: AbortSignal;
  deadline: number;
  /** The setting the deadline comes from, named when it is used up (`QUEUE_TIMEOUT_MS`). */
  setting?: string;
}

const settingOf = (ctx: CallContext) => (ctx.setting ? ` (${ctx.setting})` : '');

const RECOVERABLE_STATUS = new Set([408, 425, 429]);
export const isRecoverableStatus = (status: number) => status >= 500 || RECOVERABLE_STATUS.has(status);

/** A short, secret-free excerpt of an error body for messages. */
export function excerpt(body: string, max = 300): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return redact(flat.length > max ? `${flat.slice(0, max)}...` : flat);
}

/** The failure for a response that is not what was wanted: recoverable or permanent by its status. */
export function statusFailure(what: string, res: Response, body: string, hint = ''): Error {
  const message = `${what} answered ${res.status}${body ? `: ${excerpt(body)}` : ''}${hint}`;
  if (isRecoverableStatus(res.status)) return new RecoverableError(message, retryAfterMs(res.headers.get('retry-after')));
  return new PermanentError(message);
}

function cause(err: unknown): string {
  const c = (err as { cause?: { code?: string; message?: string } }).cause;
  return c?.code ?? c?.message ?? (err as Error).message;
}

/**
 * fetch, ended by the attempt's deadline or cancellation (which also ends reading the body). A timeout or a
 * network failure is recoverable; a cancellation is passed on as it is. A URL that came from a user (the post, its
 * picture) is fetched through the outbound guard: each connection, redirects included, only to an address it allows
 * (a refused one is a permanent failure).
 */
export async function request(what: string, url: string, init: RequestInit, ctx: CallContext, o: { guard?: OutboundGuard } = {}): Promise<Response> {
  const left = ctx.deadline - Date.now();
  if (left <= 0) throw new RecoverableError(`${what} was not reached: the attempt's time${settingOf(ctx)} is used up`);
  const timeout = AbortSignal.timeout(left);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  try {
    // Redirects are followed unless the caller follows them itself (a site crawl checks each hop's origin).
    const redirect = init.redirect ?? 'follow';
    if (!o.guard) return await fetch(url, { ...init, redirect, signal });
    // undici's own fetch: the dispatcher is the guard's. Its Response has the same interface as the global one.
    const res = await guardedFetch(url, { ...(init as UndiciRequestInit), redirect, signal, dispatcher: o.guard.dispatcher });
    return res as unknown as Response;
  } catch (err) {
    throw failure(what, err, ctx, timeout, left);
  }
}

/**
 * Reads a body, up to `maxBytes`: beyond it the rest is not read, and the body is cut (`cut`) or refused (a
 * permanent failure). Failures while reading are classified like the request's.
 */
async function readBody(what: string, res: Response, ctx: CallContext, maxBytes: number, over: 'cut' | 'refuse'): Promise<Buffer> {
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        if (over === 'refuse') throw new PermanentError(`${what} is larger than ${maxBytes} bytes`);
        break;
      }
    }
  } catch (err) {
    if (err instanceof PermanentError) throw err;
    throw failure(what, err, ctx, undefined, 0);
  }
  return Buffer.concat(chunks).subarray(0, maxBytes);
}

/** A body as text, cut after `maxBytes` (5 MB: a page's head and its JSON-LD come first). */
export async function readText(what: string, res: Response, ctx: CallContext, maxBytes = 5 * 1024 * 1024): Promise<string> {
  return new TextDecoder().decode(await readBody(what, res, ctx, maxBytes, 'cut'));
}

/** A body as bytes; more than `maxBytes` is a permanent failure. */
export async function readBytes(what: string, res: Response, ctx: CallContext, maxBytes: number): Promise<Buffer> {
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new PermanentError(`${what} is larger than ${maxBytes} bytes`);
  }
  return readBody(what, res, ctx, maxBytes, 'refuse');
}

/** An abort by a time limit (`AbortSignal.timeout`), as opposed to a cancellation. */
const isTimeout = (reason: unknown) => (reason as Error | undefined)?.name === 'TimeoutError';

function failure(what: string, err: unknown, ctx: CallContext, timeout: AbortSignal | undefined, budget: number): unknown {
  // A caller's signal that carries its own time limit, often the deadline's twin, may end the call a moment before
  // the deadline does: a timeout all the same, not a cancellation to pass on.
  const callerTimedOut = ctx.signal.aborted && isTimeout(ctx.signal.reason);
  if (ctx.signal.aborted && !callerTimedOut) return ctx.signal.reason ?? err;
  const reason = (err as { cause?: unknown }).cause;
  if (isAddressRefusal(reason)) return refused(what, reason);
  if (callerTimedOut || timeout?.aborted || isTimeout(err) || Date.now() >= ctx.deadline) {
    return new RecoverableError(
      budget ? `${what} did not answer within ${budget} ms${settingOf(ctx)}` : `${what} timed out while sending its answer${settingOf(ctx)}`,
    );
  }
  return new RecoverableError(`${what} could not be reached: ${redact(cause(err))}`);
}
