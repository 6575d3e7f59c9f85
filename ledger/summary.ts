// Counts over a (validated) ledger's findings.

import { FINDING_KINDS, FINDING_STATUSES, type FindingKind, type FindingStatus, type Ledger } from './types.js';

/**
 * Severity bands (severity is a number 0..100, higher = bigger win):
 *   high   severity >= 70
 *   medium 40 <= severity < 70
 *   low    severity < 40
 * Bounds are on the raw number, so 69.5 is medium and 39.9 is low.
 */
export const SEVERITY_BANDS = ['high', 'medium', 'low'] as const;
export type SeverityBand = (typeof SEVERITY_BANDS)[number];

export const SEVERITY_BAND_LABELS: Record<SeverityBand, string> = {
  high: 'high (>= 70)',
  medium: 'medium (40 to < 70)',
  low: 'low (< 40)',
};

export function severityBand(severity: number): SeverityBand {
  if (severity >= 70) return 'high';
  if (severity >= 40) return 'medium';
  return 'low';
}

/** snake_case like the ledger itself, since `summary --json` prints it as is. Every key is present, zero-filled. */
export interface LedgerSummary {
  total: number;
  by_kind: Record<FindingKind, number>;
  by_status: Record<FindingStatus, number>;
  by_severity: Record<SeverityBand, number>;
}

function zeroed<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/** Expects a ledger that passed validateLedger. */
export function summarizeLedger(ledger: Ledger): LedgerSummary {
  const summary: LedgerSummary = {
    total: ledger.findings.length,
    by_kind: zeroed(FINDING_KINDS),
    by_status: zeroed(FINDING_STATUSES),
    by_severity: zeroed(SEVERITY_BANDS),
  };
  for (const f of ledger.findings) {
    summary.by_kind[f.kind] += 1;
    summary.by_status[f.status] += 1;
    summary.by_severity[severityBand(f.severity)] += 1;
  }
  return summary;
}

/** Plain-text rendering used by `ledger summary`. */
export function formatSummary(summary: LedgerSummary): string {
  const section = (heading: string, rows: [string, number][]): string[] => {
    const width = Math.max(...rows.map(([label]) => label.length));
    return [heading, ...rows.map(([label, n]) => `  ${label.padEnd(width)}  ${n}`)];
  };
  return [
    `Findings: ${summary.total}`,
    ...section('By kind:', FINDING_KINDS.map((k) => [k, summary.by_kind[k]])),
    ...section('By status:', FINDING_STATUSES.map((s) => [s, summary.by_status[s]])),
    ...section('By severity:', SEVERITY_BANDS.map((b) => [SEVERITY_BAND_LABELS[b], summary.by_severity[b]])),
  ].join('\n');
}
