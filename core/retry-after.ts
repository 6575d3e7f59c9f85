/**
 * An HTTP Retry-After header (delay-seconds or an HTTP date) as milliseconds from `now`; undefined when absent or
 * unreadable, so the caller falls back to its own backoff. Every client of a third-party service reads it here.
 */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
