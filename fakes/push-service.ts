import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify } from 'node:crypto';
import fs from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { selfSignedCertificate } from './tls.js';

/**
 * A push service, as browsers' vendors run them, on https://127.0.0.1 with a self-signed certificate (its PEM is
 * written to `caFile` for PUSH_CA_FILE). It records each request; a browser subscription made here can decrypt
 * the aes128gcm payload (RFC 8291) and check the VAPID signature (RFC 8292), as a browser and the push service do.
 */
export interface PushRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export class FakePushService {
  readonly requests: PushRequest[] = [];
  /** Per subscription path, the status to answer (default 201). */
  readonly statusFor = new Map<string, number>();
  url = '';
  caFile = '';
  private server: https.Server | undefined;
  private waiters: (() => void)[] = [];

  static async start(): Promise<FakePushService> {
    const s = new FakePushService();
    const { key, cert } = selfSignedCertificate();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-push-'));
    s.caFile = path.join(dir, 'ca.pem');
    await fs.writeFile(s.caFile, cert);
    s.server = https.createServer({ key, cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        s.requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.statusCode = s.statusFor.get(req.url ?? '') ?? 201;
        res.end();
        for (const w of s.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => s.server!.listen(0, '127.0.0.1', r));
    s.url = `https://127.0.0.1:${(s.server.address() as { port: number }).port}`;
    return s;
  }

  async waitForRequests(n: number, timeoutMs = 15_000): Promise<PushRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < n) {
      if (Date.now() > deadline) throw new Error(`expected ${n} push requests, got ${this.requests.length}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100);
      });
    }
    return this.requests;
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()));
    this.server?.closeAllConnections();
    await fs.rm(path.dirname(this.caFile), { recursive: true, force: true });
  }
}

/** A browser's side of a subscription: its keys, and decryption of what the push service delivers. */
export class BrowserSubscriber {
  private readonly ecdh = createECDH('prime256v1');
  private readonly publicKey: Buffer;
  private readonly auth = randomBytes(16);

  constructor(readonly endpoint: string) {
    this.publicKey = this.ecdh.generateKeys();
  }

  /** As PushSubscription.toJSON() gives it. */
  toJSON() {
    return {
      endpoint: this.endpoint,
      expirationTime: null,
      keys: { p256dh: this.publicKey.toString('base64url'), auth: this.auth.toString('base64url') },
    };
  }

  /** RFC 8291 / RFC 8188: the aes128gcm record the application server encrypted for this subscription. */
  decrypt(body: Buffer): string {
    const salt = body.subarray(0, 16);
    const idlen = body[20]!;
    const senderKey = body.subarray(21, 21 + idlen);
    const ciphertext = body.subarray(21 + idlen);
    const shared = this.ecdh.computeSecret(senderKey);
    const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0', 'utf8'), this.publicKey, senderKey]);
    const ikm = Buffer.from(hkdfSync('sha256', shared, this.auth, keyInfo, 32));
    const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
    const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
    const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
    decipher.setAuthTag(ciphertext.subarray(-16));
    const plain = Buffer.concat([decipher.update(ciphertext.subarray(0, -16)), decipher.final()]);
    let end = plain.length - 1;
    while (end >= 0 && plain[end] === 0) end--;
    if (plain[end] !== 2) throw new Error('not a final record (padding delimiter 0x02 missing)');
    return plain.subarray(0, end).toString('utf8');
  }
}

/** Checks `Authorization: vapid t=<JWT>, k=<key>`: an ES256 JWT for the push service's origin, signed by `k`. */
export function verifyVapid(header: string | undefined, audience: string): { sub: string; exp: number; key: string } {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!m) throw new Error(`not a VAPID authorization header: ${header}`);
  const [jwtHead, jwtBody, jwtSig] = m[1]!.split('.') as [string, string, string];
  const raw = Buffer.from(m[2]!, 'base64url');
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33, 65).toString('base64url') },
    format: 'jwk',
  });
  const ok = verify('sha256', Buffer.from(`${jwtHead}.${jwtBody}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(jwtSig, 'base64url'));
  if (!ok) throw new Error('the VAPID signature does not verify');
  const header64 = JSON.parse(Buffer.from(jwtHead, 'base64url').toString('utf8')) as { alg?: string };
  const claims = JSON.parse(Buffer.from(jwtBody, 'base64url').toString('utf8')) as { aud: string; sub: string; exp: number };
  if (header64.alg !== 'ES256') throw new Error(`VAPID JWT alg ${header64.alg}`);
  if (claims.aud !== audience) throw new Error(`VAPID audience ${claims.aud}, expected ${audience}`);
  if (claims.exp * 1000 < Date.now()) throw new Error('VAPID JWT expired');
  return { sub: claims.sub, exp: claims.exp, key: m[2]! };
}
