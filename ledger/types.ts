// TypeScript view of a findings ledger; the JSON Schema in
// schemas/findings-ledger.schema.json is the source of truth.

export const FINDING_KINDS = ['structural', 'lint', 'metric', 'consolidation'] as const;
export const FINDING_STATUSES = ['pending', 'applied', 'skipped'] as const;

export type FindingKind = (typeof FINDING_KINDS)[number];
export type FindingStatus = (typeof FINDING_STATUSES)[number];
export type Pass = 'A' | 'B';

export interface LedgerConfig {
  build: string | null;
  test: string | null;
  lint: string | null;
  format: string | null;
  typecheck: string | null;
  detected_from: string;
  runtime: string;
  include_tests?: boolean;
  passes: Pass[];
  inferred_at: string;
}

export interface LedgerEngine {
  ast_grep_version: string;
  binary: string;
  enrichment: string[];
}

export interface KeptSeparate {
  detector: string;
  title: string;
  why: string;
}

export interface FindingMember {
  file: string;
  line: number;
}

export interface FindingSignal {
  cyclomatic?: number;
  lines?: number;
  nesting?: number;
  params?: number;
  dup_blocks?: number;
}

export interface Finding {
  id: string;
  kind: FindingKind;
  detector: string;
  title: string;
  verdict?: 'consolidate' | 'partial' | 'keep-separate';
  recommendation?: string;
  action: string;
  verify: string;
  members: FindingMember[];
  file?: string;
  start_line?: number;
  end_line?: number;
  lang?: string;
  suggested_pattern?: string;
  signal?: FindingSignal;
  fix_kind?: 'deterministic' | 'edit' | 'manual';
  difficulty?: 'mechanical' | 'semantic' | 'hard';
  confidence: number;
  severity: number;
  status: FindingStatus;
  notes?: string;
}

export interface Ledger {
  config: LedgerConfig;
  engine?: LedgerEngine;
  summary?: Partial<Record<Pass, number>>;
  findings: Finding[];
  kept_separate?: KeptSeparate[];
}
