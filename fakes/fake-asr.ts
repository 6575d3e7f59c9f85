/**
 * A fake transcription backend that speaks every protocol Gristmill does (docs/transcription.md, "The transcription backend"), all
 * at once on one port unless told otherwise. The tests drive it; it also runs on its own for demos:
 *
 *   npm run fake-asr -- --port 9000 [--protocol all|callback|openai|whisper-cpp|whisper-asr] [--load-seconds 5] [--delay-ms 500]
 *   ASR_BASE_URL=http://127.0.0.1:9000 npm start                          # callback
 *   ASR_BACKEND=openai ASR_BASE_URL=http://127.0.0.1:9000 npm start       # or whisper-cpp, whisper-asr
 *
 * Gristmill's callback contract:
 * - POST /jobs (multipart: file, callback_url, external_id): 202 {id, status: "queued"}; 503 + Retry-After while
 *   the model is loading.
 * - GET /model/events: server-sent events `event: model` with `{state}` (`loading`, `ready`), the current state
 *   first. Switches make it unreachable (500) or close without a ready message.
 * - DELETE /jobs/:id: cancels (recorded); GET /jobs/:id: the job.
 * - Callbacks: the backend job `{id, status, error?, segments?}` POSTed to callback_url, on demand (tests) or
 *   after `delayMs` (auto mode), plus model-lifecycle notices and replays on demand.
 *
 * The synchronous protocols, which answer each request with the transcript (503 + Retry-After while the model
 * loads, as whisper.cpp's server does):
 * - OpenAI `POST /v1/audio/transcriptions`: multipart `file` (the name's extension must be a known format),
 *   `model` (required), `response_format` (`json`, `text`, `verbose_json`, ...), `timestamp_granularities[]`,
 *   `language`, `temperature`. `verbose_json` is `{task, language, duration, text, segments: [{id, seek, start,
 *   end, text, tokens, temperature, avg_logprob, compression_ratio, no_speech_prob}], usage}`; models named
 *   `gpt-4o*` refuse it with OpenAI's 400, as text-only models do. `openaiStyle = 'localai'` answers as LocalAI
 *   does: `{segments: [{id, start, end, text, tokens}], text}` with times in nanoseconds. Bodies over
 *   `maxRequestBytes` (OpenAI: 25 MB) get OpenAI's 413.
 * - whisper.cpp's server `POST /inference`: `file`, `response_format`, `temperature`, `language`; its
 *   `verbose_json` has words per segment; a missing file is its 200 `{"error": ...}`.
 * - whisper-asr-webservice `POST /asr?encode=&task=&language=&output=json`: multipart `audio_file`; Whisper's
 *   result `{text, segments, language}` served as text/plain; FastAPI's 422 for a missing file or a bad `output`.
 * The "recogniser" hears each burst of sound in the WAV it gets and names its pitch: a segment `tone 350 hertz`
 * from the burst's start to its end, so tests can tell where every segment came from. Its words split the burst
 * in three equal parts. Its "diarizer" tells two voices apart by pitch: under 500 Hz the first speaker, else the
 * second. Word times and speakers come back as each server sends them:
 * - OpenAI: `timestamp_granularities[]=word` (with `verbose_json`) adds a top-level `words: [{word, start, end}]`;
 *   `response_format=diarized_json` (models whose name has `diarize` only; others refuse it with OpenAI's 400, and
 *   over 30 s of audio it needs `chunking_strategy`) answers `{task, duration, text, segments: [{type:
 *   "transcript.text.segment", id, start, end, text, speaker: "A"}], usage}`.
 * - whisper.cpp: words per segment in `verbose_json`, always.
 * - whisper-asr-webservice: `word_timestamps=true` adds `words: [{start, end, word, probability}]` per segment
 *   (else `words: null`); with `whisperAsrEngine = 'whisperx'` and `diarize=true` the answer is WhisperX's result,
 *   `{segments: [{start, end, text, words: [{word, start, end, score, speaker}], speaker: "SPEAKER_00"}],
 *   word_segments, language}`.
 */
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Busboy } from '@fastify/busboy';

export interface FakeSubmission {
  id: string;
  callbackUrl: string;
  externalId: string;
  fileName: string;
  fileType: string;
  bytes: number;
  sha256: string;
  /** The file starts with a RIFF/WAVE header. */
  isWav: boolean;
  status: 'queued' | 'completed' | 'failed' | 'cancelled';
}

export interface Attempt {
  status: number;
  bytes: number;
  sha256: string;
  at: number;
}

export interface Segment {
  start: number;
  end: number;
  text: string;
  /** Who says it, when the test said (FakeAsr.utterances); else the diarizer tells by pitch. */
  voice?: 0 | 1;
}

export type ModelEventsMode = 'live' | 'unreachable' | 'close-without-ready';

export const ASR_PROTOCOLS = ['callback', 'openai', 'whisper-cpp', 'whisper-asr'] as const;
export type AsrProtocol = (typeof ASR_PROTOCOLS)[number];
export type SyncProtocol = Exclude<AsrProtocol, 'callback'>;

/** One request to a synchronous route, as the fake saw it. */
export interface SyncRequest {
  protocol: SyncProtocol;
  path: string;
  query: Record<string, string>;
  /** The multipart text fields in order (a repeated name appears again). */
  fields: [string, string][];
  fileField: string;
  fileName: string;
  fileType: string;
  bytes: number;
  sha256: string;
  isWav: boolean;
  /** The audio's length, read from its WAV header and size. */
  seconds: number;
  authorization: string | undefined;
  at: number;
  status?: number;
  /** The client closed the connection before it was answered. */
  aborted: boolean;
}

/** A scripted answer for the next synchronous request. */
export interface SyncAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export class FakeAsr {
  url = '';
  /** Accepted submissions. */
  readonly jobs: FakeSubmission[] = [];
  /** Every POST /jobs, 503s included. */
  readonly attempts: Attempt[] = [];
  readonly cancels: string[] = [];
  /** Connections made to /model/events. */
  modelEventConnections = 0;
  model: 'ready' | 'loading' = 'ready';
  retryAfterSeconds = 1;
  modelEvents: ModelEventsMode = 'live';
  /** Auto mode: post a result this long after accepting a job; undefined: the test posts callbacks itself. */
  autoCompleteMs: number | undefined;
  /** What auto mode posts. */
  result: (job: FakeSubmission) => Record<string, unknown> = (job) => ({ id: job.id, status: 'completed', segments: demoSegments(job) });
  /** Authorization header expected on every request, when set. */
  apiKey: string | undefined;
  readonly callbacks: { jobId: string; status: number; body: unknown; at: number }[] = [];
  /** The protocols served; the others' routes answer 404. */
  protocols = new Set<AsrProtocol>(ASR_PROTOCOLS);
  /** Every request to a synchronous route. */
  readonly syncRequests: SyncRequest[] = [];
  /** Answers for the next synchronous requests, in order; then the transcript. */
  readonly syncScript: SyncAnswer[] = [];
  /** A synchronous answer waits this long first (a slow model); a client that hangs up meanwhile is recorded. */
  syncDelayMs = 0;
  /** How the OpenAI route answers: as OpenAI, or as LocalAI (nanosecond times). */
  openaiStyle: 'openai' | 'localai' = 'openai';
  /** The largest request the OpenAI route takes (OpenAI: 25 MB). */
  maxRequestBytes = 25 * 1024 * 1024;
  /** The OpenAI route takes `timestamp_granularities[]=word` (some compatible servers refuse it with a 400). */
  openaiWordTimes = true;
  /** The engine whisper-asr-webservice runs (its ASR_ENGINE): only `whisperx` diarizes. */
  whisperAsrEngine: 'faster_whisper' | 'openai_whisper' | 'whisperx' = 'faster_whisper';
  /**
   * What spoken test audio says (test/support/speech.ts), in order: the n-th burst of sound heard is the n-th
   * utterance, its words and its speaker; the times stay those heard in the audio. Unset: bursts are tones.
   */
  utterances: { voice: 0 | 1; text: string }[] | undefined;

  /** The bursts heard, as `utterances` says them (a transcript saying so when the audio holds another number of them). */
  private said(heard: Segment[]): Segment[] {
    const u = this.utterances;
    if (!u) return heard;
    if (u.length !== heard.length) return heard.map((s) => ({ ...s, text: `heard ${heard.length} utterances, not ${u.length}` }));
    return heard.map((s, i) => ({ ...s, text: u[i]!.text, voice: u[i]!.voice }));
  }

  private server: http.Server | undefined;
  private readonly sse = new Set<http.ServerResponse>();
  private waiters: (() => void)[] = [];

  static async start(o: { port?: number; host?: string } = {}): Promise<FakeAsr> {
    const f = new FakeAsr();
    f.server = http.createServer((req, res) => {
      f.handle(req, res).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: err.message }));
      });
    });
    await new Promise<void>((r) => f.server!.listen(o.port ?? 0, o.host ?? '127.0.0.1', r));
    f.url = `http://${o.host ?? '127.0.0.1'}:${(f.server.address() as { port: number }).port}`;
    return f;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  async waitFor<T>(what: () => T | undefined | false, timeoutMs = 20_000, label = 'condition'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = what();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`fake ASR: timed out waiting for ${label}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** The accepted submission of Gristmill job `jobId` (the latest one). */
  waitForJob(jobId: string, timeoutMs?: number): Promise<FakeSubmission> {
    return this.waitFor(() => this.jobs.filter((j) => j.externalId === jobId).at(-1), timeoutMs, `a submission of ${jobId}`);
  }

  /** Sets the model's state and tells every /model/events client. */
  setModel(state: 'ready' | 'loading'): void {
    this.model = state;
    for (const res of this.sse) res.write(`event: model\ndata: ${JSON.stringify({ state })}\n\n`);
  }

  /** POSTs `body` to the job's callback URL (or `url`), as the backend does. */
  async callback(job: FakeSubmission, body: unknown, url = job.callbackUrl): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { raw: text };
    }
    this.callbacks.push({ jobId: job.id, status: res.status, body: parsed, at: Date.now() });
    return { status: res.status, body: parsed };
  }

  complete(job: FakeSubmission, segments: unknown = demoSegments(job)) {
    job.status = 'completed';
    return this.callback(job, { id: job.id, status: 'completed', segments });
  }

  fail(job: FakeSubmission, error?: string, status: 'failed' | 'cancelled' = 'failed') {
    job.status = status;
    return this.callback(job, { id: job.id, status, ...(error !== undefined && { error }) });
  }

  /** A model-lifecycle notice to the job's callback URL: must never finish the job. */
  modelLifecycle(job: FakeSubmission) {
    return this.callback(job, { event: 'model.loaded', model: 'fake-whisper-large', state: 'ready', status: 'model_loaded' });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (this.apiKey && req.headers.authorization !== `Bearer ${this.apiKey}`) {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    const sync = (SYNC_ROUTES as Record<string, SyncProtocol | undefined>)[url.pathname];
    if (req.method === 'POST' && sync && this.protocols.has(sync)) return this.transcribe(sync, url, req, res);
    if (!this.protocols.has('callback')) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/jobs') return this.submit(req, res);
    if (req.method === 'GET' && url.pathname === '/model/events') return this.events(req, res);
    const m = /^\/jobs\/([^/]+)$/.exec(url.pathname);
    const job = m ? this.jobs.find((j) => j.id === decodeURIComponent(m[1]!)) : undefined;
    if (m && req.method === 'DELETE') {
      this.cancels.push(decodeURIComponent(m[1]!));
      this.wake();
      if (!job) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'no such job' }));
        return;
      }
      job.status = 'cancelled';
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: job.id, status: 'cancelled' }));
      return;
    }
    if (m && req.method === 'GET' && job) {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(job));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
  }

  private async submit(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const fields: Record<string, string> = {};
    const file = { name: '', type: '', bytes: 0, hash: createHash('sha256'), head: Buffer.alloc(0) };
    await new Promise<void>((resolve, reject) => {
      const bb = Busboy({ headers: req.headers as { 'content-type': string } });
      bb.on('field', (name: string, value: string) => {
        fields[name] = value;
      });
      bb.on('file', (_field: string, stream: NodeJS.ReadableStream, filename: string, _enc: string, type: string) => {
        file.name = filename;
        file.type = type;
        stream.on('data', (c: Buffer) => {
          if (file.head.length < 12) file.head = Buffer.concat([file.head, c]).subarray(0, 12);
          file.bytes += c.length;
          file.hash.update(c);
        });
      });
      bb.on('finish', resolve);
      bb.on('error', reject);
      req.pipe(bb);
    });
    const sha256 = file.hash.digest('hex');
    if (this.model !== 'ready') {
      this.attempts.push({ status: 503, bytes: file.bytes, sha256, at: Date.now() });
      this.wake();
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': String(this.retryAfterSeconds) });
      res.end(JSON.stringify({ error: 'model loading', state: this.model }));
      return;
    }
    if (!fields.callback_url || !file.bytes) {
      this.attempts.push({ status: 400, bytes: file.bytes, sha256, at: Date.now() });
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'file and callback_url are required' }));
      return;
    }
    const job: FakeSubmission = {
      id: `asr-${randomUUID().slice(0, 8)}`,
      callbackUrl: fields.callback_url,
      externalId: fields.external_id ?? '',
      fileName: file.name,
      fileType: file.type,
      bytes: file.bytes,
      sha256,
      isWav: file.head.subarray(0, 4).toString('latin1') === 'RIFF' && file.head.subarray(8, 12).toString('latin1') === 'WAVE',
      status: 'queued',
    };
    this.attempts.push({ status: 202, bytes: file.bytes, sha256, at: Date.now() });
    this.jobs.push(job);
    this.wake();
    res.writeHead(202, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: job.id, status: 'queued' }));
    if (this.autoCompleteMs !== undefined) {
      setTimeout(() => {
        if (job.status !== 'queued') return;
        const body = this.result(job);
        job.status = body.status === 'failed' ? 'failed' : 'completed';
        void this.callback(job, body).catch(() => undefined);
      }, this.autoCompleteMs);
    }
  }

  /** A synchronous route: reads the multipart form, checks it as the real server does, answers the transcript. */
  private async transcribe(protocol: SyncProtocol, url: URL, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const record: SyncRequest = {
      protocol,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      fields: [],
      fileField: '',
      fileName: '',
      fileType: '',
      bytes: 0,
      sha256: '',
      isWav: false,
      seconds: 0,
      authorization: req.headers.authorization,
      at: Date.now(),
      aborted: false,
    };
    this.syncRequests.push(record);
    res.on('close', () => {
      if (!res.writableFinished) {
        record.aborted = true;
        this.wake();
      }
    });
    const parts: Buffer[] = [];
    const hash = createHash('sha256');
    await new Promise<void>((resolve, reject) => {
      const bb = Busboy({ headers: req.headers as { 'content-type': string } });
      bb.on('field', (name: string, value: string) => record.fields.push([name, value]));
      bb.on('file', (field: string, stream: NodeJS.ReadableStream, filename: string, _enc: string, type: string) => {
        record.fileField = field;
        record.fileName = filename;
        record.fileType = type;
        stream.on('data', (c: Buffer) => {
          parts.push(c);
          hash.update(c);
        });
      });
      bb.on('finish', resolve);
      bb.on('error', reject);
      req.on('aborted', () => reject(new Error('aborted')));
      req.pipe(bb);
    }).catch(() => undefined);
    const audio = Buffer.concat(parts);
    record.bytes = audio.length;
    record.sha256 = hash.digest('hex');
    record.isWav = audio.subarray(0, 4).toString('latin1') === 'RIFF' && audio.subarray(8, 12).toString('latin1') === 'WAVE';
    record.seconds = record.isWav ? wavSeconds(audio) : 0;
    this.wake();
    const send = (status: number, body: unknown, headers: Record<string, string> = {}, type = 'application/json') => {
      if (record.aborted || res.writableEnded) return;
      record.status = status;
      this.wake();
      res.writeHead(status, { 'Content-Type': type, ...headers }).end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    const field = (name: string) => record.fields.find(([n]) => n === name)?.[1];
    const openaiError = (status: number, message: string, extra: Record<string, unknown> = {}) =>
      send(status, { error: { message, type: 'invalid_request_error', param: null, code: null, ...extra } });

    if (this.syncDelayMs) {
      await new Promise<void>((r) => {
        const timer = setTimeout(r, this.syncDelayMs);
        res.on('close', () => {
          clearTimeout(timer);
          r();
        });
      });
    }
    if (record.aborted) return;
    const scripted = this.syncScript.shift();
    if (scripted) return send(scripted.status, scripted.body ?? { error: { message: `fake error ${scripted.status}` } }, scripted.headers);
    if (this.model !== 'ready') {
      return send(503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } }, { 'Retry-After': String(this.retryAfterSeconds) });
    }
    const heard = this.said(hear(audio));
    const text = heard.map((s) => s.text).join(' ');
    // What OpenAI's and whisper.cpp's verbose_json share; their segments differ.
    const verbose = { task: 'transcribe', language: 'english', duration: record.seconds, text };

    if (protocol === 'openai') {
      const contentLength = Number(req.headers['content-length'] ?? 0);
      if (Math.max(contentLength, record.bytes) > this.maxRequestBytes) {
        return send(413, { error: { message: `Maximum content size limit (${this.maxRequestBytes}) exceeded (${Math.max(contentLength, record.bytes)} bytes read)`, type: 'server_error', param: null, code: null } });
      }
      if (!record.fileName) return openaiError(400, "1 validation error for Request\nbody -> file\n  field required (type=value_error.missing)");
      if (!/\.(flac|m4a|mp3|mp4|mpeg|mpga|oga|ogg|wav|webm)$/i.test(record.fileName)) {
        return openaiError(400, "Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']");
      }
      const model = field('model');
      if (!model) return openaiError(400, 'you must provide a model parameter');
      const format = field('response_format') ?? 'json';
      if (!['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'].includes(format)) return openaiError(400, `Invalid value: '${format}'.`, { param: 'response_format' });
      if (format === 'diarized_json') {
        if (!/diarize/.test(model)) {
          return openaiError(400, `response_format 'diarized_json' is not compatible with model '${model}'.`, { param: 'response_format', code: 'unsupported_value' });
        }
        if (record.seconds > 30 && !field('chunking_strategy')) {
          return openaiError(400, 'chunking_strategy is required for diarization models when the input is longer than 30 seconds.', { param: 'chunking_strategy' });
        }
        return send(200, {
          task: 'transcribe',
          duration: record.seconds,
          text,
          segments: heard.map((s, i) => ({ type: 'transcript.text.segment', id: `seg_${i}`, start: s.start, end: s.end, text: s.text, speaker: 'AB'[voice(s)] })),
          usage: { type: 'tokens', input_tokens: 40, output_tokens: 10 * heard.length, total_tokens: 40 + 10 * heard.length },
        });
      }
      const wantsWords = record.fields.some(([n, v]) => n === 'timestamp_granularities[]' && v === 'word');
      if (wantsWords && !this.openaiWordTimes) return openaiError(400, "timestamp_granularities[] 'word' is not supported by this server", { param: 'timestamp_granularities' });
      if (format === 'verbose_json' && /^gpt-4o/.test(model)) {
        return openaiError(400, `response_format 'verbose_json' is not compatible with model '${model}'. Use 'json' or 'text' instead.`, { param: 'response_format', code: 'unsupported_value' });
      }
      if (this.openaiStyle === 'localai') {
        const ns = (t: number) => Math.round(t * 1e9);
        return send(200, { segments: heard.map((s, i) => ({ id: i, start: ns(s.start), end: ns(s.end), text: ` ${s.text}`, tokens: [50364 + i] })), text });
      }
      const usage = { type: 'duration', seconds: Math.ceil(record.seconds) };
      if (format === 'text') return send(200, `${text}\n`, {}, 'text/plain; charset=utf-8');
      if (format !== 'verbose_json') return send(200, { text, usage });
      return send(200, {
        ...verbose,
        segments: heard.map((s, i) => ({
          id: i, seek: 0, start: s.start, end: s.end, text: ` ${s.text}`, tokens: [50364, 1000 + i, 50414],
          temperature: 0, avg_logprob: -0.21, compression_ratio: 1.1, no_speech_prob: 0.01,
        })),
        ...(record.fields.some(([n, v]) => n === 'timestamp_granularities[]' && v === 'word') && {
          words: heard.flatMap((s) => wordsOf(s).map((w) => ({ word: w.word, start: w.start, end: w.end }))),
        }),
        usage,
      });
    }
    if (protocol === 'whisper-cpp') {
      // whisper.cpp reports a missing file with 200 and an error object.
      if (!record.fileName) return send(200, { error: "no 'file' field in the request" });
      if (!record.isWav) return send(200, { error: 'failed to read audio data' });
      if (field('response_format') !== 'verbose_json') return send(200, { text });
      return send(200, {
        ...verbose,
        segments: heard.map((s, i) => ({
          id: i,
          text: ` ${s.text}`,
          start: s.start,
          end: s.end,
          tokens: [1000 + i],
          words: wordsOf(s).map((w) => ({ word: ` ${w.word}`, start: w.start, end: w.end, t_dtw: -1, probability: 0.9 })),
          temperature: 0,
          avg_logprob: -0.3,
          no_speech_prob: 0.02,
        })),
      });
    }
    // whisper-asr-webservice (FastAPI).
    if (!record.fileName || record.fileField !== 'audio_file') {
      return send(422, { detail: [{ type: 'missing', loc: ['body', 'audio_file'], msg: 'Field required', input: null }] });
    }
    const output = url.searchParams.get('output') ?? 'txt';
    if (!['txt', 'vtt', 'srt', 'tsv', 'json'].includes(output)) {
      return send(422, { detail: [{ type: 'enum', loc: ['query', 'output'], msg: "Input should be 'txt', 'vtt', 'srt', 'tsv' or 'json'", input: output }] });
    }
    const headers = { 'Asr-Engine': this.whisperAsrEngine, 'Content-Disposition': `attachment; filename="${record.fileName}.${output}"` };
    if (output !== 'json') return send(200, `${text}\n`, headers, 'text/plain; charset=utf-8');
    const wordTimes = url.searchParams.get('word_timestamps') === 'true';
    if (this.whisperAsrEngine === 'whisperx') {
      const diarize = url.searchParams.get('diarize') === 'true';
      const who = (s: Segment) => (diarize ? { speaker: `SPEAKER_0${voice(s)}` } : {});
      const segments = heard.map((s) => ({
        start: s.start, end: s.end, text: ` ${s.text}`,
        words: wordsOf(s).map((w) => ({ word: w.word, start: w.start, end: w.end, score: 0.93, ...who(s) })),
        ...who(s),
      }));
      return send(200, JSON.stringify({ segments, word_segments: segments.flatMap((x) => x.words), language: url.searchParams.get('language') ?? 'en' }), headers, 'text/plain; charset=utf-8');
    }
    const body = {
      language: url.searchParams.get('language') ?? 'en',
      segments: heard.map((s, i) => ({
        id: i + 1, seek: 0, start: s.start, end: s.end, text: ` ${s.text}`, tokens: [50364, 1000 + i],
        avg_logprob: -0.25, compression_ratio: 1.2, no_speech_prob: 0.03, temperature: 0,
        words: wordTimes ? wordsOf(s).map((w) => ({ start: w.start, end: w.end, word: ` ${w.word}`, probability: 0.91 })) : null,
      })),
      text,
    };
    return send(200, JSON.stringify(body), headers, 'text/plain; charset=utf-8');
  }

  private events(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.modelEventConnections++;
    this.wake();
    if (this.modelEvents === 'unreachable') {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('model events are down');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write(`: fake asr\n\n`);
    res.write(`event: model\ndata: ${JSON.stringify({ state: this.model })}\n\n`);
    if (this.modelEvents === 'close-without-ready') {
      res.write(`event: model\ndata: ${JSON.stringify({ state: 'loading', progress: 50 })}\n\n`);
      res.end();
      return;
    }
    this.sse.add(res);
    req.on('close', () => this.sse.delete(res));
  }

  async close(): Promise<void> {
    for (const res of this.sse) res.end();
    this.sse.clear();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()));
  }
}

/** Segments for a submission: one per 2 s of its (16 kHz mono 16-bit) audio, with a rolling echo between each pair. */
export function demoSegments(job: Pick<FakeSubmission, 'bytes'>): Segment[] {
  const seconds = Math.max(2, Math.round((job.bytes - 44) / 32_000));
  const out: Segment[] = [];
  for (let t = 0, i = 1; t < seconds; t += 2, i++) {
    out.push({ start: t, end: t + 1.9, text: `sentence number ${i} of the demo` });
    out.push({ start: t + 1.9, end: t + 2, text: `of the demo` });
  }
  return out;
}

const SYNC_ROUTES: Record<string, SyncProtocol> = { '/v1/audio/transcriptions': 'openai', '/inference': 'whisper-cpp', '/asr': 'whisper-asr' };

/** The length of a PCM WAV file in seconds, from its format and the bytes after its `data` header. */
function wavSeconds(audio: Buffer): number {
  const data = pcm(audio);
  return data ? data.samples.length / data.rate : 0;
}

/** The samples of a 16-bit PCM WAV (the first channel), and its rate. */
function pcm(audio: Buffer): { samples: Int16Array; rate: number } | undefined {
  let at = 12;
  let rate = 0;
  let channels = 1;
  while (at + 8 <= audio.length) {
    const id = audio.toString('latin1', at, at + 4);
    const size = audio.readUInt32LE(at + 4);
    if (id === 'fmt ') {
      channels = audio.readUInt16LE(at + 10);
      rate = audio.readUInt32LE(at + 12);
    } else if (id === 'data' && rate) {
      const body = audio.subarray(at + 8, Math.min(audio.length, at + 8 + size));
      const frames = Math.floor(body.length / (2 * channels));
      const samples = new Int16Array(frames);
      for (let i = 0; i < frames; i++) samples[i] = body.readInt16LE(i * 2 * channels);
      return { samples, rate };
    }
    at += 8 + size + (size % 2);
  }
  return undefined;
}

/**
 * What the fake "recognises": each burst of sound (10 ms frames louder than -34 dBFS, gaps under 0.25 s bridged,
 * bursts under 0.1 s ignored) is one segment named after its pitch (zero crossings), to the nearest 10 Hz.
 */
export function hear(audio: Buffer): Segment[] {
  const data = pcm(audio);
  if (!data) return [];
  const frame = Math.round(data.rate / 100);
  const loud: boolean[] = [];
  for (let i = 0; i + frame <= data.samples.length; i += frame) {
    let sum = 0;
    for (let j = i; j < i + frame; j++) sum += (data.samples[j]! / 32768) ** 2;
    loud.push(Math.sqrt(sum / frame) > 0.02);
  }
  const bursts: [number, number][] = [];
  for (let f = 0; f < loud.length; f++) {
    if (!loud[f]) continue;
    const last = bursts.at(-1);
    if (last && f - last[1] <= 25) last[1] = f + 1;
    else bursts.push([f, f + 1]);
  }
  return bursts
    .filter(([a, b]) => b - a >= 10)
    .map(([a, b]) => {
      // Half a period between sign changes: count them between the first and the last one.
      let crossings = 0;
      let first = 0;
      let last = 0;
      for (let i = a * frame + 1; i < b * frame; i++) {
        if (data.samples[i - 1]! < 0 === data.samples[i]! < 0) continue;
        if (!crossings) first = i;
        last = i;
        crossings++;
      }
      const hz = crossings > 1 ? Math.round(((crossings - 1) / 2 / ((last - first) / data.rate)) / 10) * 10 : 0;
      return { start: round2((a * frame) / data.rate), end: round2((b * frame) / data.rate), text: `tone ${hz} hertz` };
    });
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The fake's diarizer: a low tone (under 500 Hz) is the first voice, a high one the second. */
export function voice(s: Segment): 0 | 1 {
  if (s.voice !== undefined) return s.voice;
  const hz = Number(/(\d+) hertz/.exec(s.text)?.[1] ?? 0);
  return hz < 500 ? 0 : 1;
}

/** The words of a heard segment: its burst cut in equal parts, one per word. */
export function wordsOf(s: Segment): { word: string; start: number; end: number }[] {
  const words = s.text.split(' ');
  const step = (s.end - s.start) / words.length;
  return words.map((word, i) => ({ word, start: round3(s.start + i * step), end: round3(s.start + (i + 1) * step) }));
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** `npm run fake-asr -- --port 9000 [--protocol all] --load-seconds 5 --delay-ms 500`: a backend for demos. */
async function main(): Promise<void> {
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i === -1 ? fallback : Number(process.argv[i + 1]);
  };
  const p = process.argv.indexOf('--protocol');
  const protocol = p === -1 ? 'all' : (process.argv[p + 1] ?? '');
  if (protocol !== 'all' && !(ASR_PROTOCOLS as readonly string[]).includes(protocol)) {
    console.error(`--protocol must be all or one of ${ASR_PROTOCOLS.join(', ')}`);
    process.exit(2);
  }
  const fake = await FakeAsr.start({ port: arg('port', 9000) });
  if (protocol !== 'all') fake.protocols = new Set([protocol as AsrProtocol]);
  fake.autoCompleteMs = arg('delay-ms', 500);
  fake.syncDelayMs = arg('delay-ms', 500);
  const loadSeconds = arg('load-seconds', 0);
  if (loadSeconds > 0) {
    fake.setModel('loading');
    fake.retryAfterSeconds = Math.max(1, Math.ceil(loadSeconds / 2));
    setTimeout(() => fake.setModel('ready'), loadSeconds * 1000);
  }
  const backends = protocol === 'all' ? 'ASR_BACKEND callback, openai, whisper-cpp or whisper-asr' : `ASR_BACKEND=${protocol}`;
  console.log(`fake transcription backend on ${fake.url} (ASR_BASE_URL=${fake.url}, ${backends})`);
  process.on('SIGINT', () => void fake.close().then(() => process.exit(0)));
  process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
