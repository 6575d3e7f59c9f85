// Reading ledger files and the typed failure shared by file operations.

import { readFile } from 'node:fs/promises';
import type { LedgerError } from './validate.js';

/**
 * Why a ledger file operation failed:
 * - io: the file could not be read or written (missing, permissions, rename failed...)
 * - not-json: the file is not parseable JSON
 * - invalid-ledger: the file is JSON but fails validation (see `errors`)
 * - unknown-id: no finding has the requested id
 * - invalid-result: the change would produce an invalid ledger (see `errors`)
 * - bad-status: the requested status is not one a caller may set
 */
export type LedgerFileErrorCode = 'io' | 'not-json' | 'invalid-ledger' | 'unknown-id' | 'invalid-result' | 'bad-status';

export class LedgerFileError extends Error {
  override readonly name = 'LedgerFileError';
  constructor(
    readonly code: LedgerFileErrorCode,
    message: string,
    readonly errors: LedgerError[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type ReadText = (file: string) => Promise<string>;

const readUtf8: ReadText = (file) => readFile(file, 'utf8');

/** Read and parse a ledger file; does not validate it. Throws LedgerFileError (io | not-json). */
export async function readLedgerFile(file: string, read: ReadText = readUtf8): Promise<{ text: string; data: unknown }> {
  let text: string;
  try {
    text = await read(file);
  } catch (err) {
    throw new LedgerFileError('io', `cannot read ${file}: ${errorMessage(err)}`, [], { cause: err });
  }
  try {
    return { text, data: JSON.parse(text) as unknown };
  } catch (err) {
    throw new LedgerFileError('not-json', `${file} is not valid JSON: ${errorMessage(err)}`, [], { cause: err });
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
