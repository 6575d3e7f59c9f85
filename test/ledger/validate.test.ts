import { describe, expect, it } from 'vitest';
import { validateLedger, type LedgerError } from '../../ledger/validate.js';
import { validLedger, type AnyJson } from './helpers.js';

// Fixture findings: 0 structural (file/start_line/end_line/signal), 1 lint,
// 2 metric (full signal), 3 consolidation without verdict, 4 consolidation with verdict.

interface Case {
  name: string;
  mutate: (ledger: AnyJson) => void;
  pointer: string;
  /** Substrings the message at `pointer` must contain. */
  mentions: string[];
  rule?: string;
  /** Total errors expected (default 1: one mistake, one error, no noise). */
  count?: number;
}

function expectError(errors: LedgerError[], c: Omit<Case, 'name' | 'mutate'>): void {
  const hit = errors.find((e) => e.pointer === c.pointer);
  expect(hit, `no error at ${c.pointer}; got ${JSON.stringify(errors)}`).toBeDefined();
  for (const s of c.mentions) expect(hit?.message).toContain(s);
  if (c.rule) expect(hit?.rule).toBe(c.rule);
  expect(errors, JSON.stringify(errors)).toHaveLength(c.count ?? 1);
}

function runCases(cases: Case[]): void {
  it.each(cases)('$name', (c) => {
    const ledger = validLedger();
    c.mutate(ledger);
    const result = validateLedger(ledger);
    expect(result.valid).toBe(false);
    expectError(result.errors, c);
  });
}

const FINDING_REQUIRED = ['id', 'kind', 'detector', 'title', 'members', 'severity', 'confidence', 'action', 'verify', 'status'];
const CONFIG_REQUIRED = ['build', 'test', 'lint', 'format', 'typecheck', 'detected_from', 'runtime', 'passes', 'inferred_at'];
const COMMANDS = ['build', 'test', 'lint', 'format', 'typecheck'];
const SIGNAL_KEYS = ['cyclomatic', 'lines', 'nesting', 'params', 'dup_blocks'];
const keptItem = () => ({ detector: 'dup-blocks', title: 'Similar forms', why: 'Different audiences.' });

describe('validateLedger: valid input', () => {
  it('accepts a full ledger', () => {
    expect(validateLedger(validLedger())).toEqual({ valid: true, errors: [] });
  });

  it('accepts a minimal ledger (only config and findings, no optional keys)', () => {
    const { config, findings } = validLedger();
    delete config.include_tests;
    const minimal = findings[1];
    expect(validateLedger({ config, findings: [minimal] }).valid).toBe(true);
    expect(validateLedger({ config, findings: [] }).valid).toBe(true);
  });

  it('accepts range bounds exactly (confidence 0 and 1, severity 0 and 100, lines 1, end_line == start_line)', () => {
    const ledger = validLedger();
    Object.assign(ledger.findings[0], { confidence: 0, severity: 100, start_line: 1, end_line: 1 });
    Object.assign(ledger.findings[1], { confidence: 1, severity: 0 });
    ledger.findings[1].members[0].line = 1;
    expect(validateLedger(ledger).errors).toEqual([]);
  });

  it('accepts a consolidation finding with or without verdict and recommendation', () => {
    const ledger = validLedger();
    for (const verdict of ['consolidate', 'partial', 'keep-separate']) {
      ledger.findings[4].verdict = verdict;
      expect(validateLedger(ledger).errors).toEqual([]);
    }
    expect(ledger.findings[3].verdict).toBeUndefined();
  });

  it('accepts null for every command and an empty summary', () => {
    const ledger = validLedger();
    for (const k of COMMANDS) ledger.config[k] = null;
    ledger.summary = {};
    expect(validateLedger(ledger).errors).toEqual([]);
  });
});

describe('validateLedger: root', () => {
  it.each([
    ['null', null],
    ['an array', []],
    ['a string', 'ledger'],
  ])('rejects %s at the root pointer', (_name, data) => {
    const { valid, errors } = validateLedger(data);
    expect(valid).toBe(false);
    expect(errors).toEqual([{ pointer: '', message: 'ledger must be object', rule: 'type' }]);
  });

  runCases([
    { name: 'missing config', mutate: (l) => delete l.config, pointer: '/config', mentions: ['config'], rule: 'required' },
    { name: 'missing findings', mutate: (l) => delete l.findings, pointer: '/findings', mentions: ['findings'], rule: 'required' },
    { name: 'unknown top-level key', mutate: (l) => (l.version = 2), pointer: '/version', mentions: ['"version"'], rule: 'additionalProperties' },
    { name: 'findings not an array', mutate: (l) => (l.findings = {}), pointer: '/findings', mentions: ['findings', 'array'], rule: 'type' },
    { name: 'kept_separate not an array', mutate: (l) => (l.kept_separate = {}), pointer: '/kept_separate', mentions: ['kept_separate', 'array'], rule: 'type' },
    { name: 'summary count below 0', mutate: (l) => (l.summary.A = -1), pointer: '/summary/A', mentions: ['A', '>= 0'], rule: 'minimum' },
    { name: 'summary count not an integer', mutate: (l) => (l.summary.A = 1.5), pointer: '/summary/A', mentions: ['A', 'integer'], rule: 'type' },
    { name: 'summary key that is not a pass', mutate: (l) => (l.summary.C = 1), pointer: '/summary/C', mentions: ['"C"', 'summary'], rule: 'additionalProperties' },
  ]);
});

describe('validateLedger: finding', () => {
  runCases(
    FINDING_REQUIRED.map((key) => ({
      name: `missing required ${key}`,
      mutate: (l: AnyJson) => delete l.findings[1][key],
      pointer: `/findings/1/${key}`,
      mentions: [`"${key}"`],
      rule: 'required',
    })),
  );

  runCases([
    { name: 'finding not an object', mutate: (l) => (l.findings[0] = 'f-1'), pointer: '/findings/0', mentions: ['object'], rule: 'type' },
    { name: 'unknown finding key', mutate: (l) => (l.findings[0].priority = 'high'), pointer: '/findings/0/priority', mentions: ['"priority"'], rule: 'additionalProperties' },
    { name: 'empty id', mutate: (l) => (l.findings[0].id = ''), pointer: '/findings/0/id', mentions: ['id', 'fewer than 1'], rule: 'minLength' },
    { name: 'id not a string', mutate: (l) => (l.findings[0].id = 7), pointer: '/findings/0/id', mentions: ['id', 'string'], rule: 'type' },
    { name: 'kind not in enum', mutate: (l) => (l.findings[0].kind = 'refactor'), pointer: '/findings/0/kind', mentions: ['kind', '"structural"', '"lint"', '"metric"', '"consolidation"'], rule: 'enum' },
    { name: 'verdict not in enum', mutate: (l) => (l.findings[4].verdict = 'merge'), pointer: '/findings/4/verdict', mentions: ['verdict', '"consolidate"', '"partial"', '"keep-separate"'], rule: 'enum' },
    { name: 'fix_kind not in enum', mutate: (l) => (l.findings[0].fix_kind = 'auto'), pointer: '/findings/0/fix_kind', mentions: ['fix_kind', '"deterministic"', '"edit"', '"manual"'], rule: 'enum' },
    { name: 'difficulty not in enum', mutate: (l) => (l.findings[0].difficulty = 'easy'), pointer: '/findings/0/difficulty', mentions: ['difficulty', '"mechanical"', '"semantic"', '"hard"'], rule: 'enum' },
    { name: 'status not in enum', mutate: (l) => (l.findings[0].status = 'done'), pointer: '/findings/0/status', mentions: ['status', '"pending"', '"applied"', '"skipped"'], rule: 'enum' },
    { name: 'confidence below 0', mutate: (l) => (l.findings[0].confidence = -0.01), pointer: '/findings/0/confidence', mentions: ['confidence', '>= 0'], rule: 'minimum' },
    { name: 'confidence above 1', mutate: (l) => (l.findings[0].confidence = 1.01), pointer: '/findings/0/confidence', mentions: ['confidence', '<= 1'], rule: 'maximum' },
    { name: 'confidence not a number', mutate: (l) => (l.findings[0].confidence = '0.5'), pointer: '/findings/0/confidence', mentions: ['confidence', 'number'], rule: 'type' },
    { name: 'severity below 0', mutate: (l) => (l.findings[0].severity = -1), pointer: '/findings/0/severity', mentions: ['severity', '>= 0'], rule: 'minimum' },
    { name: 'severity above 100', mutate: (l) => (l.findings[0].severity = 100.5), pointer: '/findings/0/severity', mentions: ['severity', '<= 100'], rule: 'maximum' },
    { name: 'start_line below 1', mutate: (l) => (l.findings[0].start_line = 0), pointer: '/findings/0/start_line', mentions: ['start_line', '>= 1'], rule: 'minimum' },
    { name: 'start_line not an integer', mutate: (l) => (l.findings[0].start_line = 9.5), pointer: '/findings/0/start_line', mentions: ['start_line', 'integer'], rule: 'type' },
    {
      name: 'end_line below 1',
      mutate: (l) => {
        delete l.findings[0].start_line;
        l.findings[0].end_line = 0;
      },
      pointer: '/findings/0/end_line',
      mentions: ['end_line', '>= 1'],
      rule: 'minimum',
    },
    { name: 'empty file', mutate: (l) => (l.findings[0].file = ''), pointer: '/findings/0/file', mentions: ['file'], rule: 'minLength' },
    { name: 'lang not a string', mutate: (l) => (l.findings[0].lang = ['ts']), pointer: '/findings/0/lang', mentions: ['lang', 'string'], rule: 'type' },
    { name: 'notes not a string', mutate: (l) => (l.findings[2].notes = null), pointer: '/findings/2/notes', mentions: ['notes', 'string'], rule: 'type' },
  ]);
});

describe('validateLedger: title is one line', () => {
  runCases([
    { name: 'title with a newline', mutate: (l) => (l.findings[0].title = 'first\nsecond'), pointer: '/findings/0/title', mentions: ['title', 'single line'], rule: 'pattern' },
    { name: 'title with a carriage return', mutate: (l) => (l.findings[0].title = 'first\rsecond'), pointer: '/findings/0/title', mentions: ['title', 'single line'], rule: 'pattern' },
    { name: 'empty title', mutate: (l) => (l.findings[0].title = ''), pointer: '/findings/0/title', mentions: ['title', 'fewer than 1'], rule: 'minLength' },
    { name: 'title not a string', mutate: (l) => (l.findings[0].title = 42), pointer: '/findings/0/title', mentions: ['title', 'string'], rule: 'type' },
  ]);
});

describe('validateLedger: consolidation-only properties', () => {
  const others = [
    [0, 'structural'],
    [1, 'lint'],
    [2, 'metric'],
  ] as const;
  runCases(
    others.flatMap(([i, kind]) => [
      {
        name: `verdict on a ${kind} finding`,
        mutate: (l: AnyJson) => (l.findings[i].verdict = 'consolidate'),
        pointer: `/findings/${i}/verdict`,
        mentions: ['verdict', 'consolidation'],
        rule: 'consolidation-only',
      },
      {
        name: `recommendation on a ${kind} finding`,
        mutate: (l: AnyJson) => (l.findings[i].recommendation = 'merge them'),
        pointer: `/findings/${i}/recommendation`,
        mentions: ['recommendation', 'consolidation'],
        rule: 'consolidation-only',
      },
    ]),
  );

  it('reports exactly one error per forbidden property, without if/else noise', () => {
    const ledger = validLedger();
    Object.assign(ledger.findings[1], { verdict: 'partial', recommendation: 'x' });
    const { errors } = validateLedger(ledger);
    expect(errors.map((e) => e.pointer)).toEqual(['/findings/1/verdict', '/findings/1/recommendation']);
    for (const e of errors) expect(e.message).not.toMatch(/must match|else|then/);
  });

  it('treats a finding without kind as non-consolidation', () => {
    const ledger = validLedger();
    delete ledger.findings[4].kind;
    const { errors } = validateLedger(ledger);
    expect(errors.map((e) => [e.pointer, e.rule]).sort()).toEqual([
      ['/findings/4/kind', 'required'],
      ['/findings/4/recommendation', 'consolidation-only'],
      ['/findings/4/verdict', 'consolidation-only'],
    ]);
  });
});

describe('validateLedger: members', () => {
  runCases([
    { name: 'member missing file', mutate: (l) => delete l.findings[0].members[0].file, pointer: '/findings/0/members/0/file', mentions: ['"file"'], rule: 'required' },
    { name: 'member missing line', mutate: (l) => delete l.findings[3].members[1].line, pointer: '/findings/3/members/1/line', mentions: ['"line"'], rule: 'required' },
    { name: 'member line 0', mutate: (l) => (l.findings[0].members[0].line = 0), pointer: '/findings/0/members/0/line', mentions: ['line', '>= 1'], rule: 'minimum' },
    { name: 'member line not an integer', mutate: (l) => (l.findings[0].members[0].line = 2.5), pointer: '/findings/0/members/0/line', mentions: ['line', 'integer'], rule: 'type' },
    { name: 'member extra key', mutate: (l) => (l.findings[0].members[0].column = 4), pointer: '/findings/0/members/0/column', mentions: ['"column"'], rule: 'additionalProperties' },
    { name: 'member empty file', mutate: (l) => (l.findings[0].members[0].file = ''), pointer: '/findings/0/members/0/file', mentions: ['file'], rule: 'minLength' },
    { name: 'member not an object', mutate: (l) => (l.findings[0].members[0] = 'src/a.ts:3'), pointer: '/findings/0/members/0', mentions: ['members[0]', 'object'], rule: 'type' },
    { name: 'no members', mutate: (l) => (l.findings[0].members = []), pointer: '/findings/0/members', mentions: ['members', 'fewer than 1'], rule: 'minItems' },
    { name: 'members not an array', mutate: (l) => (l.findings[0].members = { file: 'a', line: 1 }), pointer: '/findings/0/members', mentions: ['members', 'array'], rule: 'type' },
  ]);
});

describe('validateLedger: signal', () => {
  runCases([
    ...SIGNAL_KEYS.map((k) => ({
      name: `signal.${k} below 0`,
      mutate: (l: AnyJson) => (l.findings[2].signal[k] = -1),
      pointer: `/findings/2/signal/${k}`,
      mentions: [k, '>= 0'],
      rule: 'minimum',
    })),
    { name: 'signal value not a number', mutate: (l) => (l.findings[2].signal.lines = '200'), pointer: '/findings/2/signal/lines', mentions: ['lines', 'number'], rule: 'type' },
    { name: 'signal extra key', mutate: (l) => (l.findings[2].signal.depth = 3), pointer: '/findings/2/signal/depth', mentions: ['"depth"'], rule: 'additionalProperties' },
    { name: 'signal not an object', mutate: (l) => (l.findings[2].signal = 3), pointer: '/findings/2/signal', mentions: ['signal', 'object'], rule: 'type' },
  ]);
});

describe('validateLedger: config', () => {
  runCases([
    ...CONFIG_REQUIRED.map((key) => ({
      name: `config missing ${key}`,
      mutate: (l: AnyJson) => delete l.config[key],
      pointer: `/config/${key}`,
      mentions: [`"${key}"`],
      rule: 'required',
    })),
    ...COMMANDS.map((key) => ({
      name: `config.${key} neither string nor null`,
      mutate: (l: AnyJson) => (l.config[key] = 3),
      pointer: `/config/${key}`,
      mentions: [key, 'string or null'],
      rule: 'type',
    })),
    { name: 'config not an object', mutate: (l) => (l.config = 'npm'), pointer: '/config', mentions: ['config', 'object'], rule: 'type' },
    { name: 'config extra key', mutate: (l) => (l.config.ci = 'gh'), pointer: '/config/ci', mentions: ['"ci"', 'config'], rule: 'additionalProperties' },
    { name: 'passes item not A/B', mutate: (l) => (l.config.passes = ['A', 'C']), pointer: '/config/passes/1', mentions: ['passes[1]', '"A"', '"B"'], rule: 'enum' },
    { name: 'passes empty', mutate: (l) => (l.config.passes = []), pointer: '/config/passes', mentions: ['passes', 'fewer than 1'], rule: 'minItems' },
    { name: 'passes repeated', mutate: (l) => (l.config.passes = ['B', 'B']), pointer: '/config/passes', mentions: ['passes', 'duplicate'], rule: 'uniqueItems' },
    { name: 'passes not an array', mutate: (l) => (l.config.passes = 'A'), pointer: '/config/passes', mentions: ['passes', 'array'], rule: 'type' },
    { name: 'include_tests not boolean', mutate: (l) => (l.config.include_tests = 'yes'), pointer: '/config/include_tests', mentions: ['include_tests', 'boolean'], rule: 'type' },
    { name: 'detected_from not a string', mutate: (l) => (l.config.detected_from = null), pointer: '/config/detected_from', mentions: ['detected_from', 'string'], rule: 'type' },
    { name: 'runtime not a string', mutate: (l) => (l.config.runtime = 20), pointer: '/config/runtime', mentions: ['runtime', 'string'], rule: 'type' },
    { name: 'inferred_at not a date-time', mutate: (l) => (l.config.inferred_at = 'last tuesday'), pointer: '/config/inferred_at', mentions: ['inferred_at', 'date-time'], rule: 'format' },
    { name: 'inferred_at a date without time', mutate: (l) => (l.config.inferred_at = '2025-03-01'), pointer: '/config/inferred_at', mentions: ['inferred_at', 'date-time'], rule: 'format' },
  ]);
});

describe('validateLedger: engine', () => {
  runCases([
    ...['ast_grep_version', 'binary', 'enrichment'].map((key) => ({
      name: `engine missing ${key}`,
      mutate: (l: AnyJson) => delete l.engine[key],
      pointer: `/engine/${key}`,
      mentions: [`"${key}"`],
      rule: 'required',
    })),
    { name: 'engine not an object', mutate: (l) => (l.engine = 'ast-grep'), pointer: '/engine', mentions: ['engine', 'object'], rule: 'type' },
    { name: 'engine extra key', mutate: (l) => (l.engine.path = '/bin'), pointer: '/engine/path', mentions: ['"path"', 'engine'], rule: 'additionalProperties' },
    { name: 'ast_grep_version not a string', mutate: (l) => (l.engine.ast_grep_version = 39), pointer: '/engine/ast_grep_version', mentions: ['ast_grep_version', 'string'], rule: 'type' },
    { name: 'binary not a string', mutate: (l) => (l.engine.binary = false), pointer: '/engine/binary', mentions: ['binary', 'string'], rule: 'type' },
    { name: 'enrichment not an array', mutate: (l) => (l.engine.enrichment = 'eslint'), pointer: '/engine/enrichment', mentions: ['enrichment', 'array'], rule: 'type' },
    { name: 'enrichment item not a string', mutate: (l) => (l.engine.enrichment = ['eslint', 1]), pointer: '/engine/enrichment/1', mentions: ['enrichment[1]', 'string'], rule: 'type' },
  ]);
});

describe('validateLedger: kept_separate', () => {
  runCases([
    ...['detector', 'title', 'why'].map((key) => ({
      name: `kept_separate item missing ${key}`,
      mutate: (l: AnyJson) => {
        const item: AnyJson = keptItem();
        delete item[key];
        l.kept_separate = [item];
      },
      pointer: `/kept_separate/0/${key}`,
      mentions: [`"${key}"`],
      rule: 'required',
    })),
    { name: 'kept_separate item extra key', mutate: (l) => (l.kept_separate = [keptItem(), { ...keptItem(), severity: 3 }]), pointer: '/kept_separate/1/severity', mentions: ['"severity"'], rule: 'additionalProperties' },
    { name: 'kept_separate title with a newline', mutate: (l) => (l.kept_separate = [{ ...keptItem(), title: 'a\nb' }]), pointer: '/kept_separate/0/title', mentions: ['title', 'single line'], rule: 'pattern' },
    { name: 'kept_separate why not a string', mutate: (l) => (l.kept_separate = [{ ...keptItem(), why: 1 }]), pointer: '/kept_separate/0/why', mentions: ['why', 'string'], rule: 'type' },
    { name: 'kept_separate item not an object', mutate: (l) => (l.kept_separate = ['x']), pointer: '/kept_separate/0', mentions: ['kept_separate[0]', 'object'], rule: 'type' },
  ]);
});

describe('validateLedger: rules checked in code', () => {
  runCases([
    { name: 'end_line before start_line', mutate: (l) => (l.findings[0].end_line = 9), pointer: '/findings/0/end_line', mentions: ['end_line (9)', 'start_line (10)'], rule: 'end-line-order' },
    { name: 'duplicate id', mutate: (l) => (l.findings[3].id = 'f-2'), pointer: '/findings/3/id', mentions: ['"f-2"', '/findings/1/id'], rule: 'unique-id' },
  ]);

  it('reports every later duplicate, pointing at the later one', () => {
    const ledger = validLedger();
    ledger.findings[2].id = 'f-1';
    ledger.findings[4].id = 'f-1';
    const { errors } = validateLedger(ledger);
    expect(errors.map((e) => e.pointer)).toEqual(['/findings/2/id', '/findings/4/id']);
    for (const e of errors) expect(e.message).toContain('/findings/0/id');
  });

  it('reports code-rule errors together with schema errors', () => {
    const ledger = validLedger();
    ledger.findings[0].severity = 101;
    ledger.findings[0].end_line = 1;
    ledger.findings[1].id = 'f-1';
    const { errors } = validateLedger(ledger);
    expect(errors.map((e) => [e.pointer, e.rule])).toEqual([
      ['/findings/0/severity', 'maximum'],
      ['/findings/0/end_line', 'end-line-order'],
      ['/findings/1/id', 'unique-id'],
    ]);
  });

  it('skips code rules on malformed findings instead of throwing', () => {
    const ledger = validLedger();
    ledger.findings = [null, 'x', { id: 'a', start_line: 'five', end_line: 1 }];
    const { errors } = validateLedger(ledger);
    expect(errors.some((e) => e.rule === 'end-line-order' || e.rule === 'unique-id')).toBe(false);
  });
});

describe('validateLedger: results', () => {
  it('reports all errors at once', () => {
    const ledger = validLedger();
    delete ledger.config.runtime;
    ledger.findings[0].kind = 'x';
    ledger.findings[1].severity = -3;
    ledger.engine.extra = true;
    expect(validateLedger(ledger).errors.map((e) => e.pointer)).toEqual([
      '/config/runtime',
      '/engine/extra',
      '/findings/0/kind',
      '/findings/1/severity',
    ]);
  });

  it('returns independent results across calls', () => {
    const bad = validLedger();
    bad.findings[0].status = 'nope';
    const first = validateLedger(bad);
    validateLedger(validLedger());
    expect(first.errors).toHaveLength(1);
    expect(first.valid).toBe(false);
  });

  it('escapes JSON pointer tokens for property names', () => {
    const ledger = validLedger();
    ledger.findings[0]['a/b~c'] = 1;
    expect(validateLedger(ledger).errors[0]?.pointer).toBe('/findings/0/a~1b~0c');
  });
});
