// Runs runLedgerCli in a real Node process (through tsx) to check exit codes
// and which stream each kind of output lands on.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FIXTURE_TEXT, validLedger, writeTmpLedger } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI_URL = new URL('../../ledger/cli.ts', import.meta.url).href;

// What bin/gristmill.ts is expected to do for `gristmill ledger ...`.
const ENTRY = `
const { runLedgerCli } = await import(${JSON.stringify(CLI_URL)});
process.exitCode = await runLedgerCli(process.argv.slice(1), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
});
`;

function runProcess(...argv: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', ENTRY, ...argv], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('ledger CLI in a real process', () => {
  it('exit 0, result on stdout only', () => {
    expect(runProcess('validate', writeTmpLedger(FIXTURE_TEXT))).toEqual({ code: 0, out: 'valid\n', err: '' });
  });

  it('exit 1, validation errors on stderr only', () => {
    const ledger = validLedger();
    ledger.findings[0].kind = 'bogus';
    const r = runProcess('validate', writeTmpLedger(ledger));
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe('/findings/0/kind: kind must be one of: "structural", "lint", "metric", "consolidation"\n');
  });

  it('exit 2, usage on stderr only', () => {
    const r = runProcess('set-status', 'x.json', 'f-1', 'maybe');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain('error: status must be one of: applied, skipped');
    expect(r.err).toContain('Exit codes:');
  });

  it('summary --json and set-status write results to stdout', () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    const set = runProcess('set-status', file, 'f-4', 'applied', '--notes', 'merged');
    expect(set).toEqual({ code: 0, out: 'f-4: pending -> applied (notes updated)\n', err: '' });
    const summary = runProcess('summary', file, '--json');
    expect(summary.code).toBe(0);
    expect(summary.err).toBe('');
    expect(JSON.parse(summary.out).by_status).toEqual({ pending: 2, applied: 2, skipped: 1 });
  });
});
