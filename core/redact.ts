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
