// Public surface of the findings-ledger module.

export { LEDGER_SCHEMA_ID, getLedgerSchema, ledgerSchema, validateLedger } from './validate.js';
export type { LedgerError, LedgerValidationResult } from './validate.js';
export { SEVERITY_BANDS, SEVERITY_BAND_LABELS, formatSummary, severityBand, summarizeLedger } from './summary.js';
export type { LedgerSummary, SeverityBand } from './summary.js';
export { SETTABLE_STATUSES, defaultLedgerFsOps, setFindingStatus } from './set-status.js';
export type { LedgerFsOps, SetStatusResult, SettableStatus } from './set-status.js';
export { LedgerFileError, readLedgerFile } from './file.js';
export type { LedgerFileErrorCode } from './file.js';
export { EXIT_INVALID, EXIT_OK, EXIT_USAGE, LEDGER_USAGE, runLedgerCli } from './cli.js';
export type { LedgerCliIo } from './cli.js';
export type * from './types.js';
export { FINDING_KINDS, FINDING_STATUSES } from './types.js';
