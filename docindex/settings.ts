import type { EntityManager } from '@mikro-orm/postgresql';
import { Setting } from './entities/snippet.js';

export const CONCURRENCY_KEY = 'indexing.concurrency';
export const DEFAULT_CONCURRENCY = 2;

/** At least 1, at most the larger of (CPUs - 1) and 1 (docs/documentation-index.md, "Concurrency"). */
export function clampConcurrency(value: number, cpus: number): number {
  return Math.min(Math.max(Math.trunc(value), 1), Math.max(cpus - 1, 1));
}

/** The stored value may be a bare number or `{value: number}`; anything else means the default. */
export function storedNumber(value: unknown): number | undefined {
  const n = typeof value === 'object' && value !== null ? (value as { value?: unknown }).value : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

export async function getConcurrency(em: EntityManager, cpus: number): Promise<number> {
  const row = await em.fork().findOne(Setting, { key: CONCURRENCY_KEY });
  return clampConcurrency(storedNumber(row?.value) ?? DEFAULT_CONCURRENCY, cpus);
}

/** Persists the clamped value as `{value}` and returns it. */
export async function setConcurrency(em: EntityManager, requested: number, cpus: number): Promise<number> {
  const value = clampConcurrency(requested, cpus);
  await em.fork().upsert(Setting, { key: CONCURRENCY_KEY, value: { value }, updatedAt: new Date() });
  return value;
}
