import path from 'node:path';
import { ValidationError } from '../../core/errors.js';

/**
 * A model's conventions: what it was trained to see before a query and before a passage, and how its token vectors
 * become one (pooling; a local model's only: a remote server pools as it is configured). A model used without them
 * still answers, with vectors that rank worse.
 */
export const POOLINGS = ['mean', 'cls'] as const;
export type Pooling = (typeof POOLINGS)[number];
export interface ModelConventions {
  queryPrefix: string;
  passagePrefix: string;
  pooling: Pooling;
}
/** What a profile's config may set to override its model's conventions. */
export interface ConventionsConfig {
  queryPrefix?: string;
  passagePrefix?: string;
  pooling?: Pooling;
}

export const NO_CONVENTIONS: ModelConventions = { queryPrefix: '', passagePrefix: '', pooling: 'mean' };

/**
 * Known model families, matched on the model's name without its owner (`intfloat/`) or tag (`:latest`), as their
 * model cards say to use them. A name that matches none (all-MiniLM-L6-v2 and the other sentence-transformers) gets
 * no prefixes and mean pooling.
 */
const KNOWN: { family: RegExp; conventions: ModelConventions }[] = [
  // e5 and multilingual-e5, not the instruction-tuned ones (e5-mistral, *-instruct), which take a task sentence.
  { family: /^(multilingual-)?e5-(small|base|large)(-v2)?(-q)?$/, conventions: { queryPrefix: 'query: ', passagePrefix: 'passage: ', pooling: 'mean' } },
  {
    family: /^bge-(small|base|large)-en(-v1\.?5)?(-q)?$/,
    conventions: { queryPrefix: 'Represent this sentence for searching relevant passages: ', passagePrefix: '', pooling: 'cls' },
  },
  { family: /^nomic-embed-text(-v1(\.5)?)?$/, conventions: { queryPrefix: 'search_query: ', passagePrefix: 'search_document: ', pooling: 'mean' } },
];

/** A model name as the table knows it: `intfloat/e5-small-v2` and `e5-small-v2:latest` are `e5-small-v2`. */
export function modelFamilyName(model: string): string {
  return model.trim().toLowerCase().split('/').at(-1)!.replace(/:[^:]*$/, '');
}

/** The conventions the table has for a model; none for a model it does not know. */
export function knownConventions(model: string | null | undefined): ModelConventions {
  const name = modelFamilyName(model ?? '');
  return { ...(KNOWN.find((k) => k.family.test(name))?.conventions ?? NO_CONVENTIONS) };
}

/**
 * A profile's conventions: its model's (named by `model`, else by the folder `modelPath` points at), with what its
 * config overrides. An empty prefix in the config removes the model's.
 */
export function profileConventions(model: string | null | undefined, config: ConventionsConfig & { modelPath?: string }): ModelConventions {
  const name = model || (config.modelPath ? path.basename(config.modelPath) : '');
  const known = knownConventions(name);
  return {
    queryPrefix: config.queryPrefix ?? known.queryPrefix,
    passagePrefix: config.passagePrefix ?? known.passagePrefix,
    pooling: config.pooling ?? known.pooling,
  };
}

/** Longer than any model card's instruction; a prefix costs tokens of every text embedded. */
export const MAX_PREFIX_LENGTH = 200;

/** Checks a profile's overrides (the API's schema checks them too; a row changed by hand reaches here as well). */
export function checkConventions(provider: string, config: Record<string, unknown>): void {
  const fail = (key: string, message: string): never => {
    throw new ValidationError(message, 'INVALID_PROFILE', [{ pointer: `/body/profile/config/${key}`, message }]);
  };
  for (const key of ['queryPrefix', 'passagePrefix'] as const) {
    const value = config[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') fail(key, `config.${key} must be a string`);
    if ((value as string).length > MAX_PREFIX_LENGTH) fail(key, `config.${key} is longer than ${MAX_PREFIX_LENGTH} characters`);
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(value as string)) fail(key, `config.${key} has a control character`);
  }
  const pooling = config.pooling;
  if (pooling === undefined) return;
  if (!POOLINGS.includes(pooling as Pooling)) fail('pooling', `config.pooling must be one of ${POOLINGS.join(', ')}`);
  if (provider !== 'local-transformers') fail('pooling', 'config.pooling is for local-transformers profiles: a remote server pools as it is configured');
}

export type TextRole = 'query' | 'passage';

/** A text as its model is to see it: with the query or the passage prefix. The one place the rule lives. */
export function withPrefix(conventions: ModelConventions, role: TextRole, text: string): string {
  return (role === 'query' ? conventions.queryPrefix : conventions.passagePrefix) + text;
}

/**
 * What determines a profile's vectors: the provider and model (a local model's folder and weights), a remote server's
 * vector size, and the conventions. Saving a profile with another fingerprint deletes the vectors stored for it, which
 * were made differently, and the indexing jobs the save starts embed every snippet again (profiles.ts).
 */
export function vectorFingerprint(p: { provider: string; model?: string | null; dimensions?: number | null; config: Record<string, unknown> }): string {
  const c = p.config as ConventionsConfig & { modelPath?: string; dtype?: string };
  const local = p.provider === 'local-transformers';
  const { queryPrefix, passagePrefix, pooling } = profileConventions(p.model, c);
  // A chosen `dtype` (docindex/embeddings/local.ts) too: 8-bit weights give slightly different vectors.
  const weights = local ? (c.dtype ?? null) : null;
  return JSON.stringify([p.provider, p.model ?? null, local ? (c.modelPath ?? null) : (p.dimensions ?? null), queryPrefix, passagePrefix, local ? pooling : null, weights]);
}
