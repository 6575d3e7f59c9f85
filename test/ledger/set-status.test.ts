import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LedgerFileError } from '../../ledger/file.js';
import { defaultLedgerFsOps, setFindingStatus, type LedgerFsOps, type SettableStatus } from '../../ledger/set-status.js';
import { validateLedger } from '../../ledger/validate.js';
import { FIXTURE_TEXT, validLedger, writeTmpLedger, type AnyJson } from './helpers.js';

function readJson(file: string): AnyJson {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** Run `fn`, expect a LedgerFileError with `code`, and return it. */
async function expectFailure(fn: () => Promise<unknown>, code: LedgerFileError['code']): Promise<LedgerFileError> {
  const err = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LedgerFileError);
  expect((err as LedgerFileError).code).toBe(code);
  return err as LedgerFileError;
}

/** The directory holds the ledger and nothing else (no temp file left behind). */
function expectOnlyLedger(file: string): void {
  expect(fs.readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
}

describe('setFindingStatus', () => {
  it('sets the status, keeps everything else, and writes 2-space JSON with a trailing newline', async () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    const result = await setFindingStatus(file, 'f-2', 'applied');
    expect(result.previousStatus).toBe('pending');
    expect(result.finding).toMatchObject({ id: 'f-2', status: 'applied' });

    const text = fs.readFileSync(file, 'utf8');
    const written = JSON.parse(text);
    expect(text).toBe(`${JSON.stringify(written, null, 2)}\n`);
    expect(validateLedger(written).valid).toBe(true);

    const expected = validLedger();
    expected.findings[1].status = 'applied';
    expect(written).toEqual(expected);
    expect(written.findings[1]).not.toHaveProperty('notes');
    expectOnlyLedger(file);
  });

  it('sets notes when given, replacing existing notes, and keeps key order', async () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    await setFindingStatus(file, 'f-3', 'skipped', 'Reverted: broke the build.');
    const written = readJson(file);
    expect(written.findings[2]).toMatchObject({ status: 'skipped', notes: 'Reverted: broke the build.' });
    expect(Object.keys(written.findings[2])).toEqual(Object.keys(validLedger().findings[2]));
    const expected = validLedger();
    Object.assign(expected.findings[2], { status: 'skipped', notes: 'Reverted: broke the build.' });
    expect(written).toEqual(expected);
  });

  it('leaves existing notes alone when notes are not given', async () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    await setFindingStatus(file, 'f-5', 'applied');
    expect(readJson(file).findings[4]).toMatchObject({ status: 'applied', notes: 'Not worth it yet.' });
  });

  it('reformats a compact file as 2-space JSON', async () => {
    const file = writeTmpLedger(JSON.stringify(validLedger()));
    await setFindingStatus(file, 'f-1', 'skipped');
    const text = fs.readFileSync(file, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "config": {\n    "build": "npm run build",');
  });

  it('keeps the file mode', async () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    fs.chmodSync(file, 0o640);
    await setFindingStatus(file, 'f-1', 'applied');
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
  });

  it('refuses to touch an invalid file', async () => {
    const bad = validLedger();
    bad.findings[0].severity = 500;
    const file = writeTmpLedger(bad);
    const before = fs.readFileSync(file);
    const err = await expectFailure(() => setFindingStatus(file, 'f-2', 'applied'), 'invalid-ledger');
    expect(err.errors).toEqual([expect.objectContaining({ pointer: '/findings/0/severity' })]);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expectOnlyLedger(file);
  });

  it('fails on an unknown id and leaves the file byte-identical', async () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    const err = await expectFailure(() => setFindingStatus(file, 'nope', 'applied'), 'unknown-id');
    expect(err.message).toContain('"nope"');
    expect(fs.readFileSync(file, 'utf8')).toBe(FIXTURE_TEXT);
    expectOnlyLedger(file);
  });

  it('refuses a change that would make the file invalid and leaves it byte-identical', async () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    const notes = 42 as unknown as string; // what an untyped caller could pass
    const err = await expectFailure(() => setFindingStatus(file, 'f-1', 'applied', notes), 'invalid-result');
    expect(err.errors).toEqual([expect.objectContaining({ pointer: '/findings/0/notes' })]);
    expect(fs.readFileSync(file, 'utf8')).toBe(FIXTURE_TEXT);
    expectOnlyLedger(file);
  });

  it('rejects statuses other than applied and skipped', async () => {
    const file = writeTmpLedger(FIXTURE_TEXT);
    await expectFailure(() => setFindingStatus(file, 'f-1', 'pending' as SettableStatus), 'bad-status');
    expect(fs.readFileSync(file, 'utf8')).toBe(FIXTURE_TEXT);
  });

  it('reports a missing file as an I/O error', async () => {
    const file = path.join(path.dirname(writeTmpLedger(FIXTURE_TEXT)), 'missing.json');
    await expectFailure(() => setFindingStatus(file, 'f-1', 'applied'), 'io');
    expect(fs.existsSync(file)).toBe(false);
  });

  it('reports a file that is not JSON and leaves it alone', async () => {
    const file = writeTmpLedger('{"config": ');
    await expectFailure(() => setFindingStatus(file, 'f-1', 'applied'), 'not-json');
    expect(fs.readFileSync(file, 'utf8')).toBe('{"config": ');
  });

  describe('interrupted writes', () => {
    it('a failing rename leaves the original byte-identical and removes the temp file', async () => {
      const file = writeTmpLedger(FIXTURE_TEXT);
      let tempSeen: string | undefined;
      const ops: Partial<LedgerFsOps> = {
        rename: async (from) => {
          tempSeen = from;
          expect(fs.existsSync(from)).toBe(true); // fully written and synced before the rename
          throw Object.assign(new Error('EIO: simulated rename failure'), { code: 'EIO' });
        },
      };
      const err = await expectFailure(() => setFindingStatus(file, 'f-1', 'applied', 'x', ops), 'io');
      expect(err.message).toContain('simulated rename failure');
      expect(path.dirname(tempSeen as string)).toBe(path.dirname(file));
      expect(fs.readFileSync(file, 'utf8')).toBe(FIXTURE_TEXT);
      expectOnlyLedger(file);
    });

    it('a write that dies halfway leaves the original byte-identical and removes the temp file', async () => {
      const file = writeTmpLedger(FIXTURE_TEXT);
      const ops: Partial<LedgerFsOps> = {
        writeSynced: async (tmp, data) => {
          fs.writeFileSync(tmp, data.slice(0, data.length / 2));
          throw new Error('ENOSPC: simulated full disk');
        },
      };
      await expectFailure(() => setFindingStatus(file, 'f-1', 'applied', undefined, ops), 'io');
      expect(fs.readFileSync(file, 'utf8')).toBe(FIXTURE_TEXT);
      expectOnlyLedger(file);
    });

    it('writes and syncs the temp file before renaming it over the original', async () => {
      const file = writeTmpLedger(FIXTURE_TEXT);
      const calls: string[] = [];
      const ops: Partial<LedgerFsOps> = {
        writeSynced: async (...args) => {
          calls.push('write');
          await defaultLedgerFsOps.writeSynced(...args);
        },
        rename: async (...args) => {
          calls.push('rename');
          await defaultLedgerFsOps.rename(...args);
        },
      };
      await setFindingStatus(file, 'f-1', 'applied', undefined, ops);
      expect(calls).toEqual(['write', 'rename']);
      expect(readJson(file).findings[0].status).toBe('applied');
      expectOnlyLedger(file);
    });
  });
});
