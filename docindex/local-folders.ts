import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../core/config.js';
import { NotFoundError, ValidationError } from '../core/errors.js';

/**
 * The one rule for folders on the server that the API may register as local libraries, browse, or (in a worker) read:
 * inside LOCAL_SOURCE_ROOTS (by default the home folder of the user running Gristmill), compared by real path so a
 * symlink cannot lead out; never a credential folder or inside one; never Gristmill's own DATA_DIR (its database,
 * secrets and other people's transcripts), except inside a root the operator put there. See docs/security.md.
 */

/** Folder names that hold credentials: never registered, browsed into, listed or walked, at any depth, any case. */
const CREDENTIAL_NAMES = new Set([
  '.ssh',
  '.gnupg',
  '.gpg',
  '.aws',
  '.azure',
  '.gcloud',
  '.kube',
  '.docker',
  '.password-store',
  '.pki',
  '.oci',
  '.terraform.d',
  '.vault',
  '.credentials',
  '.secrets',
  '.mozilla',
]);
/** Credential folders known by their parent too (`.config/gcloud`): the name alone is too common to refuse. */
const CREDENTIAL_PAIRS = new Set(['.config/gcloud', '.config/gh', '.config/google-chrome', '.config/chromium', '.config/op', '.local/share/keyrings']);

/** Whether a folder named `name` inside `parent` (a path) is a credential folder. */
export function isCredentialFolder(parent: string, name: string): boolean {
  const n = name.toLowerCase();
  return CREDENTIAL_NAMES.has(n) || CREDENTIAL_PAIRS.has(`${path.basename(parent).toLowerCase()}/${n}`);
}

const inside = (p: string, root: string) => p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

/** Whether any folder on the way to `p` is a credential folder. */
function crossesCredentials(p: string): boolean {
  const parts = p.split(path.sep).filter(Boolean);
  return parts.some((name, i) => isCredentialFolder(path.sep + parts.slice(0, i).join(path.sep), name));
}

async function realOrSelf(p: string): Promise<string> {
  return fs.realpath(p).catch(() => p);
}

/** The allowed roots, each as configured and as its real path (a root may itself be a symlink, e.g. /tmp on macOS). */
async function roots(config: Pick<Config, 'localSourceRoots'>): Promise<string[]> {
  return [...new Set([...config.localSourceRoots, ...(await Promise.all(config.localSourceRoots.map(realOrSelf)))])];
}

export class LocalFolders {
  constructor(private readonly config: Pick<Config, 'localSourceRoots' | 'dataDir'>) {}

  /** Where the folder browser starts: the first root. */
  get start(): string {
    return this.config.localSourceRoots[0]!;
  }

  /** Why `p` (absolute, resolved) may not be used, or undefined. Checked before and after symlinks are resolved. */
  private async refusal(p: string): Promise<string | undefined> {
    const allowed = await roots(this.config);
    if (!allowed.some((r) => inside(p, r))) return 'outside the folders allowed by LOCAL_SOURCE_ROOTS';
    if (crossesCredentials(p)) return 'a credential folder or inside one, which is never read';
    const data = [this.config.dataDir, await realOrSelf(this.config.dataDir)];
    const inData = (q: string) => data.some((d) => inside(q, d));
    // Unless a root was put inside DATA_DIR on purpose (a container's /data/repos): then that root is fine.
    if (inData(p) && !allowed.some((r) => inData(r) && inside(p, r))) return "inside Gristmill's DATA_DIR, which is never read";
    return undefined;
  }

  /**
   * The real path of an allowed folder. Not absolute: 400 INVALID_PATH. Outside the roots, a credential folder or
   * DATA_DIR (before or after resolving symlinks): 400 SOURCE_NOT_ALLOWED, decided before the disk is asked about a
   * path outside the roots, so nothing is revealed about it. Missing or not a folder: 404 FOLDER_NOT_FOUND.
   */
  async resolve(p: string): Promise<string> {
    if (!path.isAbsolute(p)) throw new ValidationError('The folder must be an absolute path', 'INVALID_PATH');
    const asked = path.resolve(p);
    const lexical = await this.refusal(asked);
    if (lexical) throw new ValidationError(`${asked} is ${lexical}`, 'SOURCE_NOT_ALLOWED');
    let real: string;
    try {
      real = await fs.realpath(asked);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new NotFoundError(`${asked} is not a folder`, 'FOLDER_NOT_FOUND');
      throw new ValidationError(`${asked} cannot be read: ${code}`, 'FOLDER_UNREADABLE');
    }
    const resolved = await this.refusal(real);
    if (resolved) throw new ValidationError(`${asked} resolves (through a symlink) to a folder that is ${resolved}`, 'SOURCE_NOT_ALLOWED');
    const st = await fs.stat(real);
    if (!st.isDirectory()) throw new NotFoundError(`${asked} is not a folder`, 'FOLDER_NOT_FOUND');
    return real;
  }

  /** Whether a folder (a real path) may be shown and entered: for the browser's parent link and its entries. */
  async allows(real: string): Promise<boolean> {
    return (await this.refusal(real)) === undefined;
  }

  /** Absolute paths a walk of an allowed folder must not enter (DATA_DIR, when it lies inside). */
  async excludedBelow(): Promise<string[]> {
    return [...new Set([this.config.dataDir, await realOrSelf(this.config.dataDir)])];
  }
}
