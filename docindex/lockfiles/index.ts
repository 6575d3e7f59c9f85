import { PayloadTooLargeError } from '../../core/errors.js';
import { readCargoLock, readCargoToml } from './cargo.js';
import { Collector } from './collect.js';
import { detectFormat } from './detect.js';
import { readPackageJson } from './npm-spec.js';
import { readPackageLock } from './package-lock.js';
import { readPnpmLock } from './pnpm.js';
import { readPoetryLock } from './poetry.js';
import { readPyproject } from './pyproject.js';
import { invalid } from './read.js';
import { readRequirements } from './requirements.js';
import { ECOSYSTEM, LIMITS, type LockfileFormat, type LockfileInput, type LockfileResult } from './types.js';
import { readUvLock } from './uv.js';
import { readYarnLock } from './yarn.js';

export type { Ecosystem, LockedDependency, LockfileFormat, LockfileInput, LockfileResult } from './types.js';
export { LIMITS } from './types.js';

/**
 * A project's lockfile or manifest read into the exact versions of its direct dependencies (issue 22, "Versions
 * from a project"). Pure: no I/O. Fails only with
 * - ValidationError LOCKFILE_UNSUPPORTED: neither the name nor the content is a format read here;
 * - ValidationError LOCKFILE_INVALID: the file (or the manifest sent with it) does not parse; the message says where;
 * - PayloadTooLargeError LOCKFILE_TOO_LARGE: over 10 MB, or over 20,000 dependencies.
 */
export function parseLockfile(input: LockfileInput): LockfileResult {
  checkSize('The file', input.content);
  if (input.manifest !== undefined) checkSize('The manifest', input.manifest);
  const format = detectFormat(input.fileName, input.content);
  const content = textOf(format, input.content);
  const manifest = input.manifest === undefined ? undefined : textOf(`The manifest sent with ${format}`, input.manifest);
  const out = new Collector(ECOSYSTEM[format]);
  READERS[format](content, out, { manifest, fileName: input.fileName });
  return out.result(format);
}

interface Context {
  manifest: string | undefined;
  fileName: string | undefined;
}

// A requirements file whose name says it is for development or tests (requirements-dev.txt, test-requirements.txt).
const DEV_REQUIREMENTS = /(^|[-_.])(dev|develop|development|test|tests|testing|lint)([-_.]|$)/;

const READERS: Record<LockfileFormat, (content: string, out: Collector, context: Context) => void> = {
  'package-lock.json': (content, out, { manifest }) => readPackageLock(content, manifest, out),
  'pnpm-lock.yaml': (content, out) => readPnpmLock(content, out),
  'yarn.lock': (content, out, { manifest }) => readYarnLock(content, manifest, out),
  'package.json': (content, out) => readPackageJson(content, out),
  'requirements.txt': (content, out, { fileName }) => {
    const base = fileName?.split(/[/\\]/).pop()?.toLowerCase() ?? '';
    readRequirements(content, DEV_REQUIREMENTS.test(base), out);
  },
  'poetry.lock': (content, out, { manifest }) => readPoetryLock(content, manifest, out),
  'uv.lock': (content, out) => readUvLock(content, out),
  'pyproject.toml': (content, out) => readPyproject(content, out),
  'Cargo.lock': (content, out, { manifest }) => readCargoLock(content, manifest, out),
  'Cargo.toml': (content, out) => readCargoToml(content, out),
};

function checkSize(what: string, text: string): void {
  // Characters never outnumber UTF-8 bytes, so the cheap test comes first.
  if (text.length > LIMITS.maxBytes || Buffer.byteLength(text, 'utf8') > LIMITS.maxBytes) {
    throw new PayloadTooLargeError(`${what} is larger than ${LIMITS.maxBytes / (1024 * 1024)} MB`, 'LOCKFILE_TOO_LARGE');
  }
}

/** The text without a byte order mark; a NUL byte means a binary file, which no format here is. */
function textOf(what: string, text: string): string {
  const nul = text.indexOf('\0');
  if (nul !== -1) throw invalid(what, `a NUL byte at line ${text.slice(0, nul).split('\n').length}: not a text file`);
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}
