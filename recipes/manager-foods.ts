import { PermanentError } from '../core/errors.js';
import type { CallContext } from '../outbound/http.js';
import { callManager, managerName, type ManagerTarget } from './manager-http.js';

/**
 * The recipe manager's food and unit objects, found by name or created when missing (docs/recipes.md,
 * "Ingredients the manager understands"). Mealie: `GET /api/foods?search=` (`/api/units`) and `POST /api/foods
 * {name}`; Tandoor: `GET /api/food/?query=` (`/api/unit/`) and `POST /api/food/ {name}` (which Tandoor itself
 * answers with the existing object when the name is taken). A search is fuzzy in both, so the match is the object
 * whose name, plural name or abbreviation is the name, ignoring case; a name is looked up once per upload.
 */
export type ManagerObjectKind = 'food' | 'unit';
export type ManagerObject = Record<string, unknown> & { id: string | number; name: string };

const PATHS = {
  mealie: { food: '/api/foods', unit: '/api/units' },
  tandoor: { food: '/api/food/', unit: '/api/unit/' },
} as const;

const same = (a: unknown, b: string) => typeof a === 'string' && a.trim().toLowerCase() === b.toLowerCase();

function isObject(v: unknown): v is ManagerObject {
  if (!v || typeof v !== 'object') return false;
  const o = v as ManagerObject;
  return (typeof o.id === 'string' || typeof o.id === 'number') && typeof o.name === 'string';
}

export class ManagerObjects {
  private readonly known = new Map<string, Promise<ManagerObject>>();

  constructor(
    private readonly t: ManagerTarget,
    private readonly ctx: CallContext,
  ) {}

  /** The food or unit called `name` (trimmed), found or created. */
  get(kind: ManagerObjectKind, name: string): Promise<ManagerObject> {
    const key = `${kind}:${name.trim().toLowerCase()}`;
    let found = this.known.get(key);
    if (!found) {
      found = this.findOrCreate(kind, name.trim());
      this.known.set(key, found);
      // A failed lookup is not remembered: the next attempt asks again.
      found.catch(() => this.known.delete(key));
    }
    return found;
  }

  private async findOrCreate(kind: ManagerObjectKind, name: string): Promise<ManagerObject> {
    const { t, ctx } = this;
    const path = PATHS[t.kind][kind];
    const what = `${managerName(t.kind)} (${kind}s)`;
    const q = encodeURIComponent(name.slice(0, 128));
    const page = (await callManager(t, what, 'GET', t.kind === 'mealie' ? `${path}?search=${q}&perPage=50` : `${path}?query=${q}&page_size=50`, undefined, ctx)) as {
      items?: unknown[];
      results?: unknown[];
    };
    const candidates = (t.kind === 'mealie' ? page.items : page.results) ?? [];
    const match = candidates.filter(isObject).find((o) => [o.name, o.pluralName, o.plural_name, o.abbreviation, o.pluralAbbreviation].some((n) => same(n, name)));
    if (match) return match;
    const created = await callManager(t, what, 'POST', path, { name: name.slice(0, 128) }, ctx);
    if (!isObject(created)) throw new PermanentError(`${what} answered without the ${kind} created`);
    return created;
  }
}
