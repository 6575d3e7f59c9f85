#!/usr/bin/env node
/** The `gristmill` command line: `gristmill ledger validate|summary|set-status ...`. */
import { runLedgerCli } from '../ledger/cli.js';

const [command, ...rest] = process.argv.slice(2);
const io = { stdout: (s: string) => process.stdout.write(s), stderr: (s: string) => process.stderr.write(s) };
if (command === 'ledger') {
  process.exitCode = await runLedgerCli(rest, io);
} else {
  io.stderr('usage: gristmill ledger <validate|summary|set-status> ... (gristmill ledger --help for more)\n');
  process.exitCode = 2;
}
