/**
 * Secrets (API keys, git host tokens, VAPID private keys) must never reach a response, a log line or a job error.
 * Every string that leaves the process through those paths goes through `redact`.
 */
const registered = new Set<string>();

/** Registers a secret value so that it is masked wherever it appears. Short values are ignored (too many false hits). */
export function registerSecret(value: string | undefined | null): void {
  if (value && value.length >= 6) registered.add(value);
}

const PATTERNS: [RegExp, string][] = [
  // credentials embedded in URLs: https://user:token@host, https://token@host
  [/([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+(?::[^\s/@]*)?@/gi, '$1***@'],
  // Authorization headers echoed in messages
  [/\b(Bearer|Basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/g, '$1 ***'],
];

export function redact(text: string, extraSecrets: readonly (string | undefined | null)[] = []): string {
  let out = text;
  for (const secret of [...registered, ...extraSecrets]) {
    if (secret && secret.length >= 6) out = out.split(secret).join('***');
  }
  for (const [re, replacement] of PATTERNS) out = out.replace(re, replacement);
  return out;
}

/**
 * What may be repeated of a third party's error answer: the message of a JSON error body (`{error: {message}}` as
 * OpenAI-compatible servers send it, `{error: "..."}`, `{message}`, `{detail}`), at most 200 characters and
 * redacted; '' for anything else. Never the raw body: it could be any page of whatever the address pointed at.
 */
export function upstreamMessage(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.length > 64 * 1024 ? '' : body);
  } catch {
    return '';
  }
  const o = (parsed ?? {}) as Record<string, unknown>;
  const err = o.error as Record<string, unknown> | string | undefined;
  const candidates = [typeof err === 'object' && err ? err.message : err, o.message, o.detail];
  const message = candidates.find((c): c is string => typeof c === 'string' && c.trim() !== '');
  return message ? redact(message.replace(/\s+/g, ' ').trim().slice(0, 200)) : '';
}
