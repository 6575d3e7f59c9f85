// Shared fixtures and helpers for the ledger tests.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import type { LedgerCliIo } from '../../ledger/cli.js';

export const FIXTURE_PATH = new URL('./fixtures/valid-ledger.json', import.meta.url);
export const FIXTURE_TEXT = fs.readFileSync(FIXTURE_PATH, 'utf8');

// Loosely typed on purpose: tests break ledgers in ways the Ledger type forbids.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJson = any;

/** A fresh, valid ledger (deep copy of the fixture) that a test may mutate. */
export function validLedger(): AnyJson {
  return JSON.parse(FIXTURE_TEXT) as AnyJson;
}

const tmpDirs: string[] = [];

// Registered on the importing test file (each file gets its own copy of this module).
afterAll(() => {
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});

export function makeTmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-ledger-'));
  tmpDirs.push(dir);
  return dir;
}

/** Write `data` (object -> 2-space JSON, string -> as is) into a new temp dir; returns the file path. */
export function writeTmpLedger(data: unknown, name = 'ledger.json'): string {
  const file = path.join(makeTmpDir(), name);
  fs.writeFileSync(file, typeof data === 'string' ? data : `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

export function captureIo(): LedgerCliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: (s) => { out += s; },
    stderr: (s) => { err += s; },
    out: () => out,
    err: () => err,
  };
}
