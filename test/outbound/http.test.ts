import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readText, request } from '../../outbound/http.js';

/**
 * How outbound/http.ts classifies a call ended early, against a real server on 127.0.0.1 that answers slowly: a
 * caller's own time limit is a recoverable timeout like the deadline's, a cancellation is passed on as it is.
 */
let server: http.Server;
let base: string;
const open = new Set<http.ServerResponse>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    if (req.url === '/body') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 1000 });
      res.write('the first part, then nothing');
    } // '/hang': no answer at all
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of open) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const rejection = (p: Promise<unknown>) => p.then(() => expect.unreachable('it answered'), (err: unknown) => err as Error);

describe('a call ended early', () => {
  it("by the caller's own time limit, before the deadline, is a recoverable timeout (waiting or reading)", async () => {
    // The caller's limit and the deadline are twins, as when both come from one setting: the deadline computed a
    // millisecond later, so the caller's limit always ends the call first.
    const call = { signal: AbortSignal.timeout(100), deadline: Date.now() + 101, setting: 'SOME_TIMEOUT_MS' };
    const waiting = await rejection(request('The server', `${base}/hang`, {}, call));
    expect(waiting).toMatchObject({ name: 'RecoverableError', message: expect.stringMatching(/^The server did not answer within 10\d ms \(SOME_TIMEOUT_MS\)$/) });

    const reading = { signal: AbortSignal.timeout(1000), deadline: Date.now() + 60_000 };
    const res = await request('The server', `${base}/body`, {}, reading);
    expect(await rejection(readText('The server', res, reading))).toMatchObject({ name: 'RecoverableError', message: 'The server timed out while sending its answer' });
  });

  it('by a cancellation is passed on as it is', async () => {
    const controller = new AbortController();
    const cancelled = new Error('the job was cancelled');
    setTimeout(() => controller.abort(cancelled), 100);
    expect(await rejection(request('The server', `${base}/hang`, {}, { signal: controller.signal, deadline: Date.now() + 60_000 }))).toBe(cancelled);
  });

  it('by the deadline is a recoverable timeout naming the time it had', async () => {
    const err = await rejection(request('The server', `${base}/hang`, {}, { signal: new AbortController().signal, deadline: Date.now() + 150 }));
    expect(err).toMatchObject({ name: 'RecoverableError', message: expect.stringMatching(/^The server did not answer within 1\d\d ms$/) });
  });
});
