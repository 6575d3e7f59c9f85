import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEDGER_USAGE, runLedgerCli } from '../../ledger/cli.js';
import { FIXTURE_TEXT, captureIo, makeTmpDir, validLedger, writeTmpLedger } from './helpers.js';

async function run(...argv: string[]) {
  const io = captureIo();
  const code = await runLedgerCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

function invalidLedgerFile(): string {
  const ledger = validLedger();
  ledger.findings[0].severity = 101;
  delete ledger.findings[1].verify;
  return writeTmpLedger(ledger);
}

const missingFile = () => path.join(makeTmpDir(), 'missing.json');

describe('ledger CLI: help and usage', () => {
  it.each([['--help'], ['-h'], ['summary', '--help']])('%s prints usage to stdout and exits 0', async (...argv) => {
    const r = await run(...argv);
    expect(r).toEqual({ code: 0, out: LEDGER_USAGE, err: '' });
  });

  it('usage lists the commands, exit codes and severity bands', () => {
    for (const s of ['validate <file>', 'summary <file> [--json]', 'set-status <file> <id> applied|skipped', '--notes', '  0  ', '  1  ', '  2  ', 'high >= 70', 'medium 40 to < 70', 'low < 40']) {
      expect(LEDGER_USAGE).toContain(s);
    }
  });

  it('no arguments prints usage to stderr and exits 2', async () => {
    const r = await run();
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain('missing command');
    expect(r.err).toContain(LEDGER_USAGE);
  });

  it.each([
    [['frobnicate', 'x.json'], 'unknown command "frobnicate"'],
    [['validate'], 'missing arguments'],
    [['validate', 'a.json', 'b.json'], 'unexpected argument "b.json"'],
    [['validate', 'a.json', '--json'], 'unknown option "--json"'],
    [['summary'], 'missing arguments'],
    [['summary', 'a.json', '--verbose'], 'unknown option "--verbose"'],
    [['summary', 'a.json', '--json=yes'], '--json takes no value'],
    [['set-status', 'a.json', 'f-1'], 'missing arguments'],
    [['set-status', 'a.json', 'f-1', 'done'], 'status must be one of: applied, skipped'],
    [['set-status', 'a.json', 'f-1', 'pending'], 'status must be one of: applied, skipped'],
    [['set-status', 'a.json', 'f-1', 'applied', '--notes'], '--notes needs a value'],
    [['set-status', 'a.json', 'f-1', 'applied', 'extra'], 'unexpected argument "extra"'],
  ])('%j is a usage error (exit 2)', async (argv, message) => {
    const r = await run(...argv);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(`error: ${message}`);
  });
});

describe('ledger CLI: validate', () => {
  it('prints "valid" and exits 0 for a valid ledger', async () => {
    expect(await run('validate', writeTmpLedger(FIXTURE_TEXT))).toEqual({ code: 0, out: 'valid\n', err: '' });
  });

  it('prints each error as "<pointer>: <message>" on stderr and exits 1', async () => {
    const r = await run('validate', invalidLedgerFile());
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err.trimEnd().split('\n').sort()).toEqual([
      '/findings/0/severity: severity must be <= 100',
      '/findings/1/verify: missing required property "verify"',
    ]);
  });

  it('prints "/" for a root-level error', async () => {
    const r = await run('validate', writeTmpLedger('[]'));
    expect(r).toEqual({ code: 1, out: '', err: '/: ledger must be object\n' });
  });

  it('treats a file that is not JSON as invalid (exit 1)', async () => {
    const r = await run('validate', writeTmpLedger('{ nope'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error: .* is not valid JSON: /);
  });

  it('treats a missing file as an I/O error (exit 2)', async () => {
    const file = missingFile();
    const r = await run('validate', file);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(`error: cannot read ${file}`);
  });

  it('treats a directory as an I/O error (exit 2)', async () => {
    expect((await run('validate', makeTmpDir())).code).toBe(2);
  });
});

describe('ledger CLI: summary', () => {
  it('prints human-readable counts', async () => {
    const r = await run('summary', writeTmpLedger(FIXTURE_TEXT));
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain('Findings: 5\n');
    expect(r.out).toContain('  consolidation  2\n');
    expect(r.out).toContain('  pending  3\n');
    expect(r.out).toContain('  high (>= 70)         2\n');
  });

  it('prints JSON with --json', async () => {
    const r = await run('summary', '--json', writeTmpLedger(FIXTURE_TEXT));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      total: 5,
      by_kind: { structural: 1, lint: 1, metric: 1, consolidation: 2 },
      by_status: { pending: 3, applied: 1, skipped: 1 },
      by_severity: { high: 2, medium: 2, low: 1 },
    });
  });

  it('prints the errors and exits 1 for an invalid ledger', async () => {
    const r = await run('summary', invalidLedgerFile());
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain('is not a valid findings ledger');
    expect(r.err).toContain('/findings/0/severity: severity must be <= 100\n');
    expect(r.err).toContain('/findings/1/verify: missing required property "verify"\n');
  });

  it('exits 1 for a file that is not JSON and 2 for a missing file', async () => {
    expect((await run('summary', writeTmpLedger('nope'))).code).toBe(1);
    expect((await run('summary', missingFile())).code).toBe(2);
  });
});

describe('ledger CLI: set-status', () => {
  it('updates the finding and reports the change on stdout', async () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    const r = await run('set-status', file, 'f-1', 'applied');
    expect(r).toEqual({ code: 0, out: 'f-1: pending -> applied\n', err: '' });
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).findings[0].status).toBe('applied');
  });

  it.each([
    [['--notes', 'Kept: hot path.']],
    [['--notes=Kept: hot path.']],
  ])('accepts notes as %j', async (notesArgs) => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    const r = await run('set-status', file, 'f-2', 'skipped', ...notesArgs);
    expect(r).toEqual({ code: 0, out: 'f-2: pending -> skipped (notes updated)\n', err: '' });
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).findings[1]).toMatchObject({ status: 'skipped', notes: 'Kept: hot path.' });
  });

  it('accepts options before positionals and "--" before an id that starts with "-"', async () => {
    const ledger = validLedger();
    ledger.findings[0].id = '-odd-id';
    const file = writeTmpLedger(ledger);
    const r = await run('set-status', '--notes', 'n', file, '--', '-odd-id', 'skipped');
    expect(r.code).toBe(0);
    expect(r.out).toBe('-odd-id: pending -> skipped (notes updated)\n');
  });

  it('exits 1 for an unknown id and leaves the file byte-identical', async () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    const r = await run('set-status', file, 'f-99', 'applied');
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain('no finding with id "f-99"');
    expect(fs.readFileSync(file, 'utf8')).toBe(FIXTURE_TEXT);
  });

  it('exits 1 for an invalid ledger, prints its errors, and leaves it byte-identical', async () => {
    const file = invalidLedgerFile();
    const before = fs.readFileSync(file);
    const r = await run('set-status', file, 'f-1', 'applied');
    expect(r.code).toBe(1);
    expect(r.err).toContain('refusing to modify it');
    expect(r.err).toContain('/findings/0/severity: severity must be <= 100\n');
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  it('exits 1 for a file that is not JSON and 2 for a missing file', async () => {
    expect((await run('set-status', writeTmpLedger('nope'), 'f-1', 'applied')).code).toBe(1);
    expect((await run('set-status', missingFile(), 'f-1', 'applied')).code).toBe(2);
  });
});
