import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../core/config.js';
import { secretBox } from '../../core/secrets.js';
import { RerankProfile, rerankKeyContext } from '../entities/rerank-profile.js';
import { LocalReranker } from './local.js';
import { MAX_DOCUMENT_CHARS, RerankError, rerankScores } from './remote.js';

/** What the stage needs of a reranker: how many results it reads, how its order is blended, and its scores. */
export interface Reranker {
  candidates: number;
  weight: number;
  /** One score per document, by position; a RerankError (or any error) within the profile's timeout. */
  score(query: string, documents: string[]): Promise<number[]>;
  close(): Promise<void>;
}

type ProfileRow = Pick<RerankProfile, 'id' | 'provider' | 'model' | 'config'>;

/** `work`, or a RerankError once `ms` have passed (the work itself goes on, and its answer is dropped). */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RerankError(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A reranker for a profile; what the profile leaves out comes from the RERANK_* settings. */
export function createReranker(profile: ProfileRow, config: Config): Reranker {
  const c = profile.config;
  const base = { candidates: c.candidates ?? config.rerank.candidates, weight: c.weight ?? config.rerank.weight };
  const timeoutMs = c.timeoutMs ?? config.rerank.timeoutMs;
  if (profile.provider === 'local-transformers') {
    const e = config.embeddings;
    const local = new LocalReranker(profile.model ?? '', c, { cacheDir: e.cacheDir, allowDownloads: e.allowDownloads, modelHost: e.modelHost });
    return { ...base, score: (q, docs) => within(timeoutMs, local.score(q, docs.map((d) => d.slice(0, MAX_DOCUMENT_CHARS)))), close: () => local.close() };
  }
  if (profile.provider !== 'remote' || !c.url) throw new RerankError(`rerank profile ${profile.id} is neither a local model nor a remote one with a url`);
  const { url, api = 'cohere', apiKey } = c;
  return {
    ...base,
    // The key is opened when a request is about to be sent, for this profile and address only.
    score: (q, docs) => rerankScores({ url, api, model: profile.model ?? undefined, timeoutMs, apiKey: apiKey && secretBox(config).open(apiKey, rerankKeyContext(profile.id, url)) }, q, docs),
    close: async () => {},
  };
}

/** The RERANK_URL settings as a reranker, used while no profile is active. */
function settingsReranker(config: Config): Reranker | null {
  const r = config.rerank;
  if (!r.url) return null;
  const url = r.url;
  return { candidates: r.candidates, weight: r.weight, score: (q, docs) => rerankScores({ ...r, url }, q, docs), close: async () => {} };
}

/** How long a process trusts its reading of the active profile: a search does not pay a query for it each time. */
const PROFILE_TTL_MS = 2000;
let cached: { at: number; profile: Promise<RerankProfile | null> } | undefined;
/** One reranker per profile version: a local model loads once; a changed profile gets a new one, the old is closed. */
let live: { key: string; reranker: Reranker } | undefined;

/** Forgets the active profile read, so a profile saved in this process applies to the next search. */
export function forgetActiveReranker(): void {
  cached = undefined;
}

/** The active profile's reranker, else the RERANK_URL settings', else null (no reranking). */
export async function activeReranker(em: EntityManager, config: Config): Promise<Reranker | null> {
  if (!cached || Date.now() - cached.at > PROFILE_TTL_MS) {
    cached = { at: Date.now(), profile: em.fork().findOne(RerankProfile, { active: true }) };
    cached.profile.catch(() => (cached = undefined));
  }
  const profile = await cached.profile;
  if (!profile) {
    // None active any more: a local model's thread and memory are given back.
    void live?.reranker.close();
    live = undefined;
    return settingsReranker(config);
  }
  const key = `${profile.id}@${profile.updatedAt.toISOString()}`;
  if (live?.key !== key) {
    void live?.reranker.close();
    live = { key, reranker: createReranker(profile, config) };
  }
  return live.reranker;
}

/** Closes the reranker this process opened (shutdown). */
export async function closeRerankers(): Promise<void> {
  await live?.reranker.close();
  live = undefined;
  cached = undefined;
}
