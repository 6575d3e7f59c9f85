// `gristmill ledger ...`: validate, summarize and update findings ledgers.

import { LedgerFileError, errorMessage, readLedgerFile } from './file.js';
import { SETTABLE_STATUSES, setFindingStatus, type SettableStatus } from './set-status.js';
import { formatSummary, summarizeLedger } from './summary.js';
import type { Ledger } from './types.js';
import { validateLedger, type LedgerError } from './validate.js';

export interface LedgerCliIo {
  /** Receives whole lines, newline included (process.stdout.write fits). */
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

export const EXIT_OK = 0;
/** The ledger content is the problem: invalid, not JSON, unknown id, or the change would invalidate it. */
export const EXIT_INVALID = 1;
/** The invocation or the environment is the problem: usage errors and I/O errors. */
export const EXIT_USAGE = 2;

export const LEDGER_USAGE = `Usage: gristmill ledger <command> [options]

Commands:
  validate <file>                  Check a findings ledger against the schema and ledger rules
  summary <file> [--json]          Count findings by kind, status and severity band
  set-status <file> <id> applied|skipped [--notes <text>]
                                   Record the outcome for one finding; the file is
                                   validated before and after, and rewritten atomically

Options:
  --json            summary: print the counts as JSON
  --notes <text>    set-status: also set the finding's notes
  -h, --help        Show this help

Severity bands (severity is 0..100, higher = bigger win):
  high >= 70, medium 40 to < 70, low < 40

Exit codes:
  0  success (validate: the ledger is valid)
  1  invalid ledger content: fails the schema or a ledger rule, or is not JSON;
     set-status also: no finding has that id, or the change would make the file invalid
  2  usage error (unknown command or option, missing or extra arguments, bad status)
     or I/O error (file missing or unreadable, write failed)

Results go to stdout; errors and usage go to stderr. Ledger errors are printed
one per line as "<JSON pointer>: <message>", with "/" for the whole document.
`;

interface ParsedArgs {
  positionals: string[];
  json: boolean;
  notes: string | undefined;
}

class UsageError extends Error {}

/** Run `gristmill ledger <argv...>`; returns the exit code and never exits the process. */
export async function runLedgerCli(argv: string[], io: LedgerCliIo): Promise<number> {
  const endOfOptions = argv.indexOf('--');
  const optionArgs = endOfOptions === -1 ? argv : argv.slice(0, endOfOptions);
  if (optionArgs.includes('--help') || optionArgs.includes('-h')) {
    io.stdout(LEDGER_USAGE);
    return EXIT_OK;
  }
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
        throw new UsageError('missing command');
      case 'validate':
        return await validateCommand(parseArgs(rest, 1, []), io);
      case 'summary':
        return await summaryCommand(parseArgs(rest, 1, ['--json']), io);
      case 'set-status':
        return await setStatusCommand(parseArgs(rest, 3, ['--notes']), io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\n\n${LEDGER_USAGE}`);
      return EXIT_USAGE;
    }
    if (err instanceof LedgerFileError) return reportFileError(err, io);
    io.stderr(`error: ${errorMessage(err)}\n`);
    return EXIT_USAGE;
  }
}

function parseArgs(args: string[], positionalCount: number, allowed: string[]): ParsedArgs {
  const parsed: ParsedArgs = { positionals: [], json: false, notes: undefined };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      parsed.positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      parsed.positionals.push(arg);
      continue;
    }
    const [name, inlineValue] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (!allowed.includes(name)) throw new UsageError(`unknown option "${name}"`);
    if (name === '--json') {
      if (inlineValue !== undefined) throw new UsageError('--json takes no value');
      parsed.json = true;
    } else if (name === '--notes') {
      const value = inlineValue ?? args[++i];
      if (value === undefined) throw new UsageError('--notes needs a value');
      parsed.notes = value;
    }
  }
  if (parsed.positionals.length < positionalCount) throw new UsageError('missing arguments');
  if (parsed.positionals.length > positionalCount) throw new UsageError(`unexpected argument "${parsed.positionals[positionalCount]}"`);
  return parsed;
}

function printLedgerErrors(errors: LedgerError[], io: LedgerCliIo): void {
  io.stderr(errors.map((e) => `${e.pointer || '/'}: ${e.message}\n`).join(''));
}

// Maps each failure to the documented exit code.
function reportFileError(err: LedgerFileError, io: LedgerCliIo): number {
  switch (err.code) {
    case 'not-json':
      io.stderr(`error: ${err.message}\n`);
      return EXIT_INVALID;
    case 'invalid-ledger':
    case 'invalid-result':
      io.stderr(`error: ${err.message}\n`);
      printLedgerErrors(err.errors, io);
      return EXIT_INVALID;
    case 'unknown-id':
      io.stderr(`error: ${err.message}\n`);
      return EXIT_INVALID;
    case 'bad-status':
    case 'io':
      io.stderr(`error: ${err.message}\n`);
      return EXIT_USAGE;
  }
}

async function validateCommand({ positionals: [file] }: ParsedArgs, io: LedgerCliIo): Promise<number> {
  const { data } = await readLedgerFile(file as string);
  const { valid, errors } = validateLedger(data);
  if (!valid) {
    printLedgerErrors(errors, io);
    return EXIT_INVALID;
  }
  io.stdout('valid\n');
  return EXIT_OK;
}

async function summaryCommand({ positionals: [file], json }: ParsedArgs, io: LedgerCliIo): Promise<number> {
  const { data } = await readLedgerFile(file as string);
  const { valid, errors } = validateLedger(data);
  if (!valid) {
    throw new LedgerFileError('invalid-ledger', `${file} is not a valid findings ledger`, errors);
  }
  const summary = summarizeLedger(data as Ledger);
  io.stdout(json ? `${JSON.stringify(summary, null, 2)}\n` : `${formatSummary(summary)}\n`);
  return EXIT_OK;
}

async function setStatusCommand({ positionals: [file, id, status], notes }: ParsedArgs, io: LedgerCliIo): Promise<number> {
  if (!(SETTABLE_STATUSES as readonly string[]).includes(status as string)) {
    throw new UsageError(`status must be one of: ${SETTABLE_STATUSES.join(', ')} (got "${status}")`);
  }
  const { finding, previousStatus } = await setFindingStatus(file as string, id as string, status as SettableStatus, notes);
  const notesPart = notes === undefined ? '' : ' (notes updated)';
  io.stdout(`${finding.id}: ${previousStatus} -> ${finding.status}${notesPart}\n`);
  return EXIT_OK;
}
