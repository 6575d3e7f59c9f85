import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import webpush from 'web-push';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { registerSecret } from '../core/redact.js';

/**
 * The VAPID key pair (RFC 8292) that signs every push request. From VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY when set;
 * otherwise generated once and kept in DATA_DIR/vapid.json (mode 0600), so browsers' subscriptions stay valid
 * across restarts, and the API and every worker sharing DATA_DIR use the same pair.
 */
export interface VapidKeys {
  publicKey: string;
  privateKey: string;
  subject: string;
  source: 'environment' | string;
}

export const VAPID_FILE = 'vapid.json';

async function readKeyFile(file: string): Promise<{ publicKey: string; privateKey: string } | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = JSON.parse(text) as { publicKey?: unknown; privateKey?: unknown };
  if (typeof parsed.publicKey !== 'string' || typeof parsed.privateKey !== 'string') {
    throw new Error(`${file} does not hold a VAPID key pair ({publicKey, privateKey}); remove it to generate a new one`);
  }
  // A copy restored with looser permissions is tightened: the private key is a secret.
  const st = await fs.stat(file);
  if (st.mode & 0o077) await fs.chmod(file, 0o600).catch(() => undefined);
  return { publicKey: parsed.publicKey, privateKey: parsed.privateKey };
}

/** Writes the pair to a private temporary file, then links it into place: exactly one of racing processes wins. */
async function createKeyFile(file: string): Promise<void> {
  const keys = webpush.generateVAPIDKeys();
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await fs.writeFile(tmp, JSON.stringify({ ...keys, createdAt: new Date().toISOString() }, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  try {
    await fs.link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await fs.unlink(tmp).catch(() => undefined);
  }
}

const loaded = new Map<string, Promise<VapidKeys>>();

export function loadVapidKeys(config: Pick<Config, 'dataDir' | 'push'>, log: Logger): Promise<VapidKeys> {
  const { vapidPublicKey, vapidPrivateKey, vapidSubject } = config.push;
  if (vapidPublicKey && vapidPrivateKey) {
    return Promise.resolve({ publicKey: vapidPublicKey, privateKey: vapidPrivateKey, subject: vapidSubject, source: 'environment' });
  }
  const file = path.join(config.dataDir, VAPID_FILE);
  let keys = loaded.get(file);
  if (!keys) {
    keys = (async () => {
      let pair = await readKeyFile(file);
      if (!pair) {
        await createKeyFile(file);
        pair = (await readKeyFile(file))!;
        log.info('generated a VAPID key pair for web push', { file });
      }
      registerSecret(pair.privateKey);
      return { ...pair, subject: vapidSubject, source: file };
    })();
    keys.catch(() => loaded.delete(file));
    loaded.set(file, keys);
  }
  return keys;
}
