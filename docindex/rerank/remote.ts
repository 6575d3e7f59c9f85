import { redact, upstreamMessage } from '../../core/redact.js';
import type { RerankConfig } from '../configuration.js';

/**
 * One call to a remote rerank server: the `/rerank` shape Cohere, Jina, vLLM, Infinity and llama.cpp's server share
 * (`{ model, query, documents, top_n }` -> `{ results: [{ index, relevance_score }] }`), or Text Embeddings Inference's
 * (`{ query, texts }` -> `[{ index, score }]`). Any failure is a RerankError; the caller keeps the search's order.
 */
export class RerankError extends Error {}

/** A document is cut here: cross-encoders read a few hundred tokens, and the request stays small whatever a snippet holds. */
export const MAX_DOCUMENT_CHARS = 4000;
/** The largest answer read: 200 scores take a few kilobytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

type Settings = Pick<RerankConfig, 'api' | 'model' | 'apiKey' | 'timeoutMs'> & { url: string };

function body(s: Settings, query: string, documents: string[]): string {
  const docs = documents.map((d) => d.slice(0, MAX_DOCUMENT_CHARS));
  if (s.api === 'tei') return JSON.stringify({ query, texts: docs, truncate: true });
  return JSON.stringify({ ...(s.model && { model: s.model }), query, documents: docs, top_n: docs.length });
}

/** The answer's text, refused past MAX_ANSWER_BYTES. */
async function readBounded(res: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > MAX_ANSWER_BYTES) throw new RerankError(`the rerank server's answer is over ${MAX_ANSWER_BYTES} bytes`);
    chunks.push(chunk as Uint8Array);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Scores by input position from either answer shape; every document must be scored once. */
export function parseScores(text: string, count: number): number[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new RerankError('the rerank server answered with something that is not JSON');
  }
  const rows = Array.isArray(data) ? data : (data as { results?: unknown } | null)?.results;
  if (!Array.isArray(rows)) throw new RerankError('the rerank server answered neither `results` nor a list');
  const scores: number[] = new Array<number>(count).fill(NaN);
  for (const row of rows as Record<string, unknown>[]) {
    const index = row?.index;
    const score = row?.relevance_score ?? row?.score;
    if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= count || typeof score !== 'number' || !Number.isFinite(score)) {
      throw new RerankError('the rerank server answered a result without a valid index and score');
    }
    scores[index as number] = score;
  }
  if (scores.some((s) => Number.isNaN(s))) throw new RerankError(`the rerank server scored ${rows.length} of ${count} documents`);
  return scores;
}

/** The relevance score of each document (by position), or a RerankError within `timeoutMs`. */
export async function rerankScores(s: Settings, query: string, documents: string[], signal?: AbortSignal): Promise<number[]> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (s.apiKey) headers.authorization = `Bearer ${s.apiKey}`;
  const timeout = AbortSignal.timeout(s.timeoutMs);
  try {
    // No redirects: a rerank endpoint has no reason to send the key elsewhere.
    const res = await fetch(s.url, { method: 'POST', headers, body: body(s, query, documents), redirect: 'error', signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    const text = await readBounded(res);
    if (!res.ok) {
      const message = upstreamMessage(text);
      throw new RerankError(`the rerank server answered ${res.status}${message ? `: ${message}` : ''}`);
    }
    return parseScores(text, documents.length);
  } catch (err) {
    if (err instanceof RerankError) throw new RerankError(redact(err.message, [s.apiKey]));
    const { message, cause } = err as Error & { cause?: { message?: string } };
    const reason = timeout.aborted ? `no answer within ${s.timeoutMs} ms` : [message, cause?.message].filter(Boolean).join(': ');
    throw new RerankError(`the rerank server could not be reached: ${redact(reason, [s.apiKey])}`);
  }
}
