import { PermanentError } from '../../../core/errors.js';
import { type CallContext, readBytes, readText, request, statusFailure } from '../../../outbound/http.js';
import type { Ecosystem, SourceContext } from '../types.js';
import { headersFor, type RegistryEndpoint, resolveEndpoint } from './config.js';
import { validPackageName } from './names.js';

/**
 * How registry clients read: every request through the outbound guard, within the lookup's time and a size bound,
 * with the registry's credentials on its own origin only. Failures, by code: none for 5xx and timeouts
 * (RecoverableError: another attempt may succeed), REGISTRY_ERROR for other 4xx, REGISTRY_RESPONSE_INVALID for a
 * document that is too large or not what the protocol says; a refused address keeps the guard's ADDRESS_NOT_ALLOWED.
 */
export const REGISTRY_ERROR = 'REGISTRY_ERROR';
export const REGISTRY_RESPONSE_INVALID = 'REGISTRY_RESPONSE_INVALID';
export const REGISTRY_NOT_CONFIGURED = 'REGISTRY_NOT_CONFIGURED';

/** A client's bounds: how long a lookup may take in all, and the largest document it reads. */
export interface ClientLimits {
  timeoutMs: number;
  maxBytes: number;
}

/** One lookup's reading: its context, its registry and when it must be over. */
export interface RegistryCall {
  ctx: SourceContext;
  endpoint: RegistryEndpoint;
  call: CallContext;
  maxBytes: number;
}

/** A lookup's start: the name checked (it goes into URLs), the registry found. */
export async function startCall(ecosystem: Ecosystem, name: string, ctx: SourceContext, limits: ClientLimits): Promise<RegistryCall> {
  validPackageName(ecosystem, name);
  const found = await resolveEndpoint(ecosystem);
  if ('unavailable' in found) throw new PermanentError(found.unavailable, REGISTRY_NOT_CONFIGURED);
  return { ctx, endpoint: found.endpoint, call: { signal: ctx.signal, deadline: Date.now() + limits.timeoutMs }, maxBytes: limits.maxBytes };
}

export const invalid = (message: string) => new PermanentError(message, REGISTRY_RESPONSE_INVALID);

export interface RegistryDocument {
  text: string;
  contentType: string;
  /** Where it was read from, after redirects (relative links are relative to it). */
  url: string;
}

/** A registry document; null when the registry has none there (404, 410). */
export async function getDocument(what: string, url: string, r: RegistryCall, accept: string): Promise<RegistryDocument | null> {
  r.ctx.heartbeat(`reading ${what.replace(/^The /, 'the ')}`);
  const headers = { accept, 'user-agent': 'gristmill (documentation index)', ...headersFor(url, r.endpoint) };
  const res = await request(what, url, { headers }, r.call, { guard: r.ctx.guard });
  if (res.status === 404 || res.status === 410) {
    await res.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!res.ok) {
    const failure = statusFailure(what, res, await readText(what, res, r.call, 4096).catch(() => ''));
    throw failure instanceof PermanentError ? new PermanentError(failure.message, REGISTRY_ERROR) : failure;
  }
  let body: Buffer;
  try {
    body = await readBytes(what, res, r.call, r.maxBytes);
  } catch (err) {
    throw err instanceof PermanentError && !err.code ? invalid(err.message) : err;
  }
  return { text: body.toString('utf8'), contentType: res.headers.get('content-type') ?? '', url: res.url || url };
}

/** A JSON document's value; malformed JSON is the registry's fault, said without repeating the body. */
export function parseJson(what: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalid(`${what} is not valid JSON`);
  }
}

/** A JSON object, or the protocol's violation. */
export function jsonObject(what: string, text: string): Record<string, unknown> {
  const value = parseJson(what, text);
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid(`${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

export const asObject = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
export const asString = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);

/** An http(s) URL resolved against `base`, or null (a registry's document decides where its files are). */
export function httpUrl(raw: unknown, base: string): string | null {
  if (typeof raw !== 'string') return null;
  try {
    const u = new URL(raw, base);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}
