import { describe, expect, it } from 'vitest';
import { formatSummary, severityBand, summarizeLedger } from '../../ledger/summary.js';
import { ledgerSchema } from '../../ledger/validate.js';
import { validLedger, type AnyJson } from './helpers.js';

describe('severityBand', () => {
  it.each([
    [100, 'high'],
    [70, 'high'],
    [69.99, 'medium'],
    [40, 'medium'],
    [39.99, 'low'],
    [0, 'low'],
  ])('%s is %s', (severity, band) => {
    expect(severityBand(severity)).toBe(band);
  });
});

describe('summarizeLedger', () => {
  it('counts the fixture by kind, status and severity band', () => {
    expect(summarizeLedger(validLedger())).toEqual({
      total: 5,
      by_kind: { structural: 1, lint: 1, metric: 1, consolidation: 2 },
      by_status: { pending: 3, applied: 1, skipped: 1 },
      by_severity: { high: 2, medium: 2, low: 1 },
    });
  });

  it('counts the schema example', () => {
    expect(summarizeLedger((ledgerSchema as AnyJson).examples[0])).toEqual({
      total: 4,
      by_kind: { structural: 1, lint: 1, metric: 1, consolidation: 1 },
      by_status: { pending: 2, applied: 1, skipped: 1 },
      by_severity: { high: 1, medium: 1, low: 2 },
    });
  });

  it('zero-fills every key for an empty ledger', () => {
    const ledger = validLedger();
    ledger.findings = [];
    expect(summarizeLedger(ledger)).toEqual({
      total: 0,
      by_kind: { structural: 0, lint: 0, metric: 0, consolidation: 0 },
      by_status: { pending: 0, applied: 0, skipped: 0 },
      by_severity: { high: 0, medium: 0, low: 0 },
    });
  });
});

describe('formatSummary', () => {
  it('renders aligned sections with the band definitions', () => {
    expect(formatSummary(summarizeLedger(validLedger()))).toBe(
      [
        'Findings: 5',
        'By kind:',
        '  structural     1',
        '  lint           1',
        '  metric         1',
        '  consolidation  2',
        'By status:',
        '  pending  3',
        '  applied  1',
        '  skipped  1',
        'By severity:',
        '  high (>= 70)         2',
        '  medium (40 to < 70)  2',
        '  low (< 40)           1',
      ].join('\n'),
    );
  });
});
