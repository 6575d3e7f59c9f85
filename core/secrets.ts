import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import { PermanentError } from './errors.js';
import type { Logger } from './log.js';
import { registerSecret } from './redact.js';

/**
 * Secrets at rest: what users give Gristmill to keep (git-host tokens, embedding providers' API keys) is stored
 * sealed with AES-256-GCM, and opened only where it is used (a git command's environment, a provider's request).
 *
 * The key comes from SECRETS_KEY, else from DATA_DIR/secrets.key, generated once (mode 0600, like the VAPID pair):
 * every process that opens secrets must have the same key, so processes that do not share DATA_DIR need
 * SECRETS_KEY. Losing the key loses the stored secrets (they must be entered again), so it is backed up with
 * DATA_DIR, or kept where SECRETS_KEY comes from.
 *
 * A sealed value is `gmsec:v1:<key id>:<base64url(iv | tag | ciphertext)>`. The key id (the start of the key's
 * SHA-256) tells "another key" apart from "altered". Each value is sealed for a context (what it belongs to, e.g.
 * the library, or the profile and the address its key may be sent to), authenticated with it, so a value copied to
 * another row or context does not open.
 */
export const SECRETS_FILE = 'secrets.key';
const PREFIX = 'gmsec:v1:';

/** A stored secret that cannot be opened: retrying will not help; it has to be entered again (or the key restored). */
const unreadable = (message: string) => new PermanentError(message, 'SECRET_UNREADABLE');

export interface SecretBox {
  /** The sealed form of `plain`, for `context`. */
  seal(plain: string, context: string): string;
  /** The plain value of a sealed one (registered for redaction); a value that is not sealed is answered as it is. */
  open(stored: string, context: string): string;
}

export const isSealed = (value: string): boolean => value.startsWith(PREFIX);

const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

function readKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key in base64; restore it from a backup (or set SECRETS_KEY)`);
  // A copy restored with looser permissions is tightened: the key opens every stored secret. (A file this process
  // may not change, a read-only mount say, is still used.)
  if (fs.statSync(file).mode & 0o077) {
    try {
      fs.chmodSync(file, 0o600);
    } catch {
      // kept as it is
    }
  }
  return key;
}

/** Writes a new key to a private temporary file, then links it into place: exactly one of racing processes wins. */
function createKeyFile(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** A box on a key; `key('seal')` may create the key file, `key('open')` never does (a made-up key opens nothing). */
function box(key: (use: 'seal' | 'open') => Buffer): SecretBox {
  return {
    seal(plain, context) {
      registerSecret(plain);
      const k = key('seal');
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', k, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${PREFIX}${keyId(k)}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(stored, context) {
      if (!isSealed(stored)) {
        registerSecret(stored);
        return stored;
      }
      const k = key('open');
      const [storedId, data] = stored.slice(PREFIX.length).split(':');
      if (storedId !== keyId(k)) {
        throw unreadable(
          `A stored secret was sealed with another key (${storedId}, this process has ${keyId(k)}): give every process the same SECRETS_KEY or DATA_DIR/${SECRETS_FILE}, or enter the secret again`,
        );
      }
      const raw = Buffer.from(data ?? '', 'base64url');
      try {
        const decipher = createDecipheriv('aes-256-gcm', k, raw.subarray(0, 12));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(raw.subarray(12, 28));
        const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
        registerSecret(plain);
        return plain;
      } catch {
        throw unreadable('A stored secret does not open here (it was altered, or belongs to another record): enter it again');
      }
    },
  };
}

const fileKeys = new Map<string, Buffer>();

/**
 * The secret box of a configuration: SECRETS_KEY, else DATA_DIR/secrets.key, generated when the first secret is
 * sealed. Opening never generates one: without the key a sealed value is unreadable, and says so.
 */
export function secretBox(config: Pick<Config, 'dataDir' | 'secretsKey'>, log?: Logger): SecretBox {
  const fixed = config.secretsKey;
  if (fixed) return box(() => fixed);
  const file = path.join(config.dataDir, SECRETS_FILE);
  return box((use) => {
    let key = fileKeys.get(file) ?? readKeyFile(file);
    if (!key && use === 'open') {
      throw unreadable(`A stored secret cannot be opened: ${file} is missing; set SECRETS_KEY or restore the file, or enter the secret again`);
    }
    if (!key) {
      createKeyFile(file);
      key = readKeyFile(file)!;
      log?.info('generated the key that encrypts stored secrets; back it up with DATA_DIR (losing it means entering tokens and keys again)', { file });
    }
    fileKeys.set(file, key);
    return key;
  });
}
