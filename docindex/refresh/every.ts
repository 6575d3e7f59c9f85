import { msToNumber } from '@temporalio/common/lib/time.js';
import { ValidationError } from '../../core/errors.js';

/** How often a library's refresh runs: milliseconds, or `off` (no schedule). */
export type RefreshEvery = number | 'off';

/** Sooner would ask a git host or a registry for nothing new most of the time. */
const MIN_MS = 60_000;
const MAX_MS = 366 * 86_400_000;

/**
 * Reads INDEX_REFRESH_EVERY or a library's own interval: `off`, or a duration such as `30m`, `6h`, `1d`, `2 weeks`
 * (as Temporal reads durations). A ValidationError (`INVALID_REFRESH_EVERY`) says what is wrong.
 */
export function parseRefreshEvery(input: string): RefreshEvery {
  const text = input.trim().toLowerCase();
  if (text === 'off') return 'off';
  let ms: number;
  try {
    ms = /^\d+$/.test(text) ? NaN : msToNumber(text); // a bare number would be read as milliseconds
  } catch {
    ms = NaN;
  }
  if (!Number.isFinite(ms)) throw new ValidationError(`"${input}" is not an interval: write off, or a duration such as 30m, 6h or 1d`, 'INVALID_REFRESH_EVERY');
  if (ms < MIN_MS || ms > MAX_MS) throw new ValidationError(`A refresh interval is between 1 minute and a year, got "${input}"`, 'INVALID_REFRESH_EVERY');
  return ms;
}
