import { SseParser } from './sse.js';

/**
 * The one way the UI talks to the API: JSON requests, downloads and event streams, each sending the API key the
 * user saved (API_KEY on the server) as `Authorization: Bearer`, and each turning a failure into one readable
 * message. The key lives in this browser's localStorage only and is never shown again.
 */
const KEY_STORAGE = 'gristmill.apiKey';

export const apiKey = {
  get: (): string => localStorage.getItem(KEY_STORAGE) ?? '',
  set: (key: string): void => localStorage.setItem(KEY_STORAGE, key.trim()),
  clear: (): void => localStorage.removeItem(KEY_STORAGE),
};

function authHeaders(): Record<string, string> {
  const key = apiKey.get();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: unknown;
  message?: unknown;
  code?: unknown;
  details?: { pointer?: string; message?: string }[];
}

/** `{error, code, details}` (and the queue's `{success: false, message}`) as one sentence. */
async function errorFrom(res: Response): Promise<ApiError> {
  let body: ErrorBody = {};
  try {
    body = (await res.json()) as ErrorBody;
  } catch {
    // not JSON: the status says enough
  }
  const code = typeof body.code === 'string' ? body.code : undefined;
  if (res.status === 401) {
    const message = apiKey.get()
      ? 'The API refused the API key saved in this browser. Check it under Settings.'
      : 'This server needs an API key. Enter it under Settings.';
    return new ApiError(message, 401, code);
  }
  let message = typeof body.error === 'string' ? body.error : typeof body.message === 'string' ? body.message : `The API answered ${res.status} ${res.statusText}`;
  const details = (body.details ?? []).filter((d) => d.message).map((d) => `${(d.pointer ?? '').replace(/^\/(body|query)\//, '')} ${d.message}`.trim());
  if (details.length) message += `: ${details.join('; ')}`;
  return new ApiError(message, res.status, code);
}

async function send(path: string, init: RequestInit = {}): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, { ...init, headers: { ...authHeaders(), ...(init.headers as Record<string, string> | undefined) } });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(`Cannot reach the Gristmill API (${(err as Error).message}). Is the server running?`, 0);
  }
  if (!res.ok) throw await errorFrom(res);
  return res;
}

/** A JSON request; `body` is sent as JSON, or as it is when it is FormData (uploads). */
export async function api<T>(path: string, o: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const isForm = o.body instanceof FormData;
  const res = await send(path, {
    method: o.method ?? 'GET',
    ...(o.signal && { signal: o.signal }),
    ...(o.body !== undefined && {
      body: isForm ? (o.body as FormData) : JSON.stringify(o.body),
      ...(!isForm && { headers: { 'Content-Type': 'application/json' } }),
    }),
  });
  return (await res.json()) as T;
}

export async function apiText(path: string): Promise<string> {
  return (await send(path)).text();
}

/** A file as a Blob, fetched with the API key (what an element's own `src` request cannot carry). */
export async function apiBlob(path: string): Promise<Blob> {
  return (await send(path)).blob();
}

/** Downloads through fetch (so the API key goes along) and saves the file under the name the server gave. */
export async function download(path: string): Promise<void> {
  const res = await send(path);
  const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? path.split('/').pop() ?? 'download';
  const url = URL.createObjectURL(await res.blob());
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export const hasApiKey = (): boolean => apiKey.get() !== '';

export interface StreamHandlers {
  /** Each event with its JSON data parsed. */
  onEvent(event: string, data: unknown): void;
  /** Connected (again): a good moment to reload what the stream does not replay. */
  onOpen?(): void;
  /** A failure to show, or null once the stream works again. */
  onProblem?(message: string | null): void;
}

/**
 * Follows a server-sent event stream over fetch, so that the API key can go in a header (EventSource cannot send
 * one). Like EventSource it reconnects after a drop, sending Last-Event-ID so the server replays what was missed,
 * and stops on 204. Unlike EventSource it can tell a refused key (401) from a network problem; a 4xx other than
 * 408/429 stops it, since trying again would not help. Returns the function that closes it.
 */
export function openStream(path: string, h: StreamHandlers): () => void {
  let closed = false;
  let controller: AbortController | undefined;
  let delay = 1000;
  const parser = new SseParser();

  const run = async (): Promise<void> => {
    while (!closed) {
      controller = new AbortController();
      try {
        const headers: Record<string, string> = { Accept: 'text/event-stream' };
        if (parser.lastEventId !== undefined) headers['Last-Event-ID'] = parser.lastEventId;
        const res = await send(path, { headers, signal: controller.signal, cache: 'no-store' });
        if (res.status === 204 || !res.body) return;
        delay = 1000;
        parser.reset();
        h.onProblem?.(null);
        h.onOpen?.();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const e of parser.push(value)) {
            let data: unknown = e.data;
            try {
              data = JSON.parse(e.data);
            } catch {
              // plain text data stays a string
            }
            h.onEvent(e.event, data);
          }
        }
      } catch (err) {
        if (closed) return;
        const e = err as ApiError;
        if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 408 && e.status !== 429) {
          h.onProblem?.(`Live updates stopped: ${e.message}`);
          return;
        }
        h.onProblem?.('Live updates were interrupted; reconnecting…');
      }
      if (closed) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 15_000);
    }
  };
  void run();
  return () => {
    closed = true;
    controller?.abort();
  };
}
