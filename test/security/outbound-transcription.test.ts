import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.js';
import { isFinished, startTranscriptionHarness, type TranscriptionHarness, waitForJob } from '../support/transcription.js';
import { internalServer, INTERNAL_SECRET, publicServer, type RecordingServer } from './outbound-support.js';

/**
 * Server-side request forgery through transcription URLs, with the real yt-dlp: an internal
 * address fails the job before yt-dlp runs; a public page that redirects inside, or whose media is inside, fails
 * too, because yt-dlp's every connection goes through the guard's proxy. Only 127.0.0.2 is allowed; the internal
 * server on 127.0.0.1 must never be hit.
 */
let h: TranscriptionHarness;
let internal: RecordingServer;
let pub: RecordingServer;

beforeAll(async () => {
  internal = await internalServer();
  pub = await publicServer((req, res) => {
    if (req.url === '/watch/inside') {
      // A video page whose media is on the internal server.
      return res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!doctype html><html><head><title>Talk</title></head><body><video controls><source src="${internal.url}/media/talk.wav" type="audio/wav"></video></body></html>`);
    }
    res.writeHead(404).end();
  });
  h = await startTranscriptionHarness({ env: { OUTBOUND_ALLOW: '127.0.0.2' } });
});
afterAll(async () => {
  await h?.stop();
  await Promise.all([internal?.close(), pub?.close()]);
});

async function urlJob(url: string) {
  const res = await fetch(`${h.url}/api/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url, mode: 'none' }) });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return waitForJob(h.url, body.id, isFinished, 120_000);
}

describe('transcription URLs at internal addresses', () => {
  it('fail before yt-dlp runs, saying why', async () => {
    for (const [url, reason] of [
      [`${internal.url}/watch/direct`, /^The video URL was refused: 127\.0\.0\.1 is a loopback address/],
      [`http://localhost:${internal.port}/watch/by-name`, /^The video URL was refused: localhost resolves to a loopback address/],
      ['http://169.254.169.254/latest/meta-data/', /^The video URL was refused: 169\.254\.169\.254 is a cloud metadata address/],
    ] as const) {
      const job = await urlJob(url);
      expect(job.status, url).toBe('failed');
      // The refusal, not a message of yt-dlp's: it never ran.
      expect(job.error, url).toMatch(reason);
      expect(job.stage).toBe('captions');
    }
    expect(internal.hits).toEqual([]);
  });

  it('a public page redirecting inside, or whose media is inside: yt-dlp is stopped at that connection', async () => {
    const redirected = await urlJob(`${pub.url}/to?url=${encodeURIComponent(`${internal.url}/watch/secret`)}`);
    expect(redirected.status).toBe('failed');
    expect(redirected.error).toMatch(/yt-dlp failed/);
    const inside = await urlJob(`${pub.url}/watch/inside`);
    expect(inside.status).toBe('failed');
    for (const job of [redirected, inside]) expect(JSON.stringify(job)).not.toContain(INTERNAL_SECRET);
    expect(pub.hits.filter((hit) => hit.startsWith('GET /to?') || hit === 'GET /watch/inside').length).toBeGreaterThanOrEqual(2);
    expect(internal.hits).toEqual([]);
  });
});
