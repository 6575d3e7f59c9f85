import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-http.js';
import { until } from '../support/until.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Multipart uploads that end early, carry no boundary or are cut off by the client: each is one request's 400,
 * never the process's end (before: a skipped file part with no error listener took the whole stack down).
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ queues: [], env: { UPLOAD_MAX_BYTES: '64kb' } });
});
afterAll(() => stack?.stop());

const multipart = (boundary: string, body: string) => ({
  method: 'POST',
  path: '/api/jobs',
  headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
  body,
});
const alive = async () => expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
const uploadsLeft = async () => (await fs.readdir(path.join(stack.dataDir, 'uploads')).catch(() => [])).length;

describe('a malformed upload', () => {
  it('whose skipped file part never ends is answered (415: the first problem found), and the process lives on', async () => {
    const res = await rawRequest(stack.url, multipart('BND', '--BND\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nxx'));
    expect(res.status).toBe(415);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    await alive();
  });

  it('whose second file part (skipped) never ends is 400, and nothing is kept', async () => {
    const body =
      '--B\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF....\r\n' +
      '--B\r\nContent-Disposition: form-data; name="other"; filename="b.wav"\r\n\r\nnever ends';
    const res = await rawRequest(stack.url, multipart('B', body));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'INVALID_MULTIPART' });
    expect(await uploadsLeft()).toBe(0);
    await alive();
  });

  it('whose taken file part never ends is 400 and its partial file is deleted', async () => {
    const res = await rawRequest(stack.url, multipart('B', '--B\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF'));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'INVALID_MULTIPART' });
    expect(await uploadsLeft()).toBe(0);
    await alive();
  });

  it('without a boundary, or with an empty one, is 400 INVALID_MULTIPART (not 500)', async () => {
    for (const type of ['multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; charset=utf-8']) {
      const res = await rawRequest(stack.url, { method: 'POST', path: '/api/jobs', headers: { 'Content-Type': type }, body: '--x\r\n\r\n' });
      expect(res.status, type).toBe(400);
      expect(JSON.parse(res.text), type).toMatchObject({ code: 'INVALID_MULTIPART' });
    }
    await alive();
  });

  it('cut off by the client half-way (in a skipped part or in the file) is dropped, and the process lives on', async () => {
    const url = new URL(stack.url);
    for (const part of ['name="other"; filename="b.wav"', 'name="file"; filename="a.wav"']) {
      await new Promise<void>((resolve) => {
        const req = http.request({
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/api/jobs',
          headers: { 'Content-Type': 'multipart/form-data; boundary=B', 'Content-Length': 50_000 },
        });
        req.on('error', () => resolve());
        req.write(`--B\r\nContent-Disposition: form-data; ${part}\r\n\r\n` + 'x'.repeat(1000));
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 300);
      });
    }
    await alive();
    await until(uploadsLeft, (n) => n === 0, { what: 'the aborted upload cleaned up' });
  });
});
