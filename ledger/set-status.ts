// Record the outcome of acting on a finding, rewriting the ledger atomically.

import { randomBytes } from 'node:crypto';
import { open, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { LedgerFileError, errorMessage, readLedgerFile } from './file.js';
import type { Finding, FindingStatus, Ledger } from './types.js';
import { validateLedger } from './validate.js';

/** Statuses a caller may set; `pending` is only ever the initial state. */
export const SETTABLE_STATUSES = ['applied', 'skipped'] as const;
export type SettableStatus = (typeof SETTABLE_STATUSES)[number];

/** File operations used by setFindingStatus; injectable so tests can make any step fail. */
export interface LedgerFsOps {
  readFile: (file: string) => Promise<string>;
  /** Create `file` (must not exist), write `data`, fsync, close. */
  writeSynced: (file: string, data: string, mode: number) => Promise<void>;
  rename: (from: string, to: string) => Promise<void>;
  unlink: (file: string) => Promise<void>;
}

export const defaultLedgerFsOps: LedgerFsOps = {
  readFile: (file) => readFile(file, 'utf8'),
  writeSynced: async (file, data, mode) => {
    const fh = await open(file, 'wx', mode);
    try {
      await fh.chmod(mode); // open's mode is masked by the umask
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
  },
  rename,
  unlink,
};

export interface SetStatusResult {
  finding: Finding;
  previousStatus: FindingStatus;
}

/**
 * Set a finding's status (and notes, when given) in the ledger at `file`.
 * The file must be a valid ledger before and after the change; it is then
 * rewritten as 2-space JSON with a trailing newline via temp file + fsync +
 * rename, so on any failure the original stays byte-identical and no temp
 * file is left behind. Not safe against concurrent writers (last one wins).
 * Throws LedgerFileError.
 */
export async function setFindingStatus(
  file: string,
  id: string,
  status: SettableStatus,
  notes?: string,
  fsOps: Partial<LedgerFsOps> = {},
): Promise<SetStatusResult> {
  const ops: LedgerFsOps = { ...defaultLedgerFsOps, ...fsOps };
  if (!(SETTABLE_STATUSES as readonly string[]).includes(status)) {
    throw new LedgerFileError('bad-status', `status must be one of: ${SETTABLE_STATUSES.join(', ')} (got "${String(status)}")`);
  }

  const { data } = await readLedgerFile(file, ops.readFile);
  const before = validateLedger(data);
  if (!before.valid) {
    throw new LedgerFileError('invalid-ledger', `${file} is not a valid findings ledger; refusing to modify it`, before.errors);
  }
  const ledger = data as Ledger;
  const finding = ledger.findings.find((f) => f.id === id);
  if (!finding) {
    throw new LedgerFileError('unknown-id', `no finding with id "${id}" in ${file}`);
  }

  const previousStatus = finding.status;
  finding.status = status;
  if (notes !== undefined) finding.notes = notes;

  // Callers outside TypeScript can still pass odd values (e.g. non-string notes).
  const after = validateLedger(ledger);
  if (!after.valid) {
    throw new LedgerFileError('invalid-result', `the change would make ${file} invalid; file left unchanged`, after.errors);
  }

  await writeAtomically(file, `${JSON.stringify(ledger, null, 2)}\n`, ops);
  return { finding, previousStatus };
}

async function writeAtomically(file: string, text: string, ops: LedgerFsOps): Promise<void> {
  let mode: number;
  try {
    mode = (await stat(file)).mode & 0o777;
  } catch (err) {
    throw new LedgerFileError('io', `cannot stat ${file}: ${errorMessage(err)}`, [], { cause: err });
  }
  // Same directory as the target, so the rename cannot cross filesystems.
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await ops.writeSynced(tmp, text, mode);
    await ops.rename(tmp, file);
  } catch (err) {
    await ops.unlink(tmp).catch(() => undefined); // may not exist if the create failed
    throw new LedgerFileError('io', `cannot write ${file}: ${errorMessage(err)}`, [], { cause: err });
  }
  await syncDir(dir);
}

// Persist the rename itself; best effort, as not every platform allows fsync on a directory.
async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // ignore
  }
}
