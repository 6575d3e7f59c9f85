import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook tokens: every submission to the backend gets a fresh random token in its callback URL; only its sha256
 * is stored. A call is genuine when the hash of its token matches, compared in constant time.
 */
export const newToken = (): string => randomBytes(32).toString('base64url');

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export function tokenMatches(token: unknown, storedHash: string | null | undefined): boolean {
  if (typeof token !== 'string' || !token || !storedHash || !/^[0-9a-f]{64}$/.test(storedHash)) return false;
  return timingSafeEqual(Buffer.from(hashToken(token), 'hex'), Buffer.from(storedHash, 'hex'));
}

/** The callback URL the backend calls: `{PUBLIC_BASE_URL}/api/webhooks/asr/<jobId>?token=<token>`. */
export function callbackUrl(publicBaseUrl: string, jobId: string, token: string): string {
  return `${publicBaseUrl}/api/webhooks/asr/${encodeURIComponent(jobId)}?token=${encodeURIComponent(token)}`;
}
