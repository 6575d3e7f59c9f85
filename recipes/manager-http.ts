import { PermanentError } from '../core/errors.js';
import type { RecipeManagerKind } from './configuration.js';
import { type CallContext, excerpt, readText, request, statusFailure } from '../outbound/http.js';

/**
 * How the recipe queue talks to Mealie or Tandoor (docs/recipes.md): `Authorization: Bearer <RECIPE_MANAGER_TOKEN>`,
 * JSON both ways. 401/403 (a wrong token), 400/422 (Mealie's BAD_RECIPE_DATA) and other 4xx are permanent; 408,
 * 429 and 5xx recoverable.
 */
export interface ManagerTarget {
  kind: RecipeManagerKind;
  baseUrl: string;
  /** Where users open recipes. */
  publicUrl: string;
  token: string | undefined;
  mealieGroup: string;
}

const NAMES: Record<RecipeManagerKind, string> = { mealie: 'Mealie', tandoor: 'Tandoor' };
export const managerName = (kind: RecipeManagerKind) => NAMES[kind];

export function managerHeaders(t: ManagerTarget, json = true): Record<string, string> {
  return { accept: 'application/json', ...(json && { 'content-type': 'application/json' }), ...(t.token && { authorization: `Bearer ${t.token}` }) };
}

export function hintFor(status: number, body: string): string {
  if (status === 401 || status === 403) return ' (check RECIPE_MANAGER_TOKEN)';
  if (status === 404) return ' (check RECIPE_MANAGER_BASE_URL)';
  if (/BAD_RECIPE_DATA/.test(body)) return ' (the recipe manager rejected the recipe as incomplete or malformed)';
  return '';
}

/** One JSON call to the manager's API (`path` from its root): the parsed answer, or the failure by its status. */
export async function callManager(
  t: ManagerTarget,
  what: string,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  body: unknown,
  ctx: CallContext,
): Promise<unknown> {
  const res = await request(
    what,
    `${t.baseUrl}${path}`,
    { method, headers: managerHeaders(t, body !== undefined), ...(body !== undefined && { body: JSON.stringify(body) }) },
    ctx,
  );
  const text = await readText(what, res, ctx, 4 * 1024 * 1024);
  if (!res.ok) throw statusFailure(what, res, text, hintFor(res.status, text));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new PermanentError(`${what} answered ${res.status} with a body that is not JSON: ${excerpt(text, 200)}`);
  }
}
