/**
 * The food, unit and ingredient-parser endpoints of the fake recipe managers (fakes/recipe-fakes.ts), in the shapes
 * the real ones publish:
 *
 * - Mealie: `POST /api/parser/ingredients {parser, ingredients}` -> `[{input, confidence, ingredient}]`, the
 *   ingredient's unit and food an IngredientUnit / IngredientFood (with `id`) when Mealie has one by that name, a
 *   CreateIngredientUnit / CreateIngredientFood (no `id`) when not, and `food: null` for a line its parser cannot
 *   read (here: more than four words after the quantity and unit); `GET /api/foods?search=&perPage=` and
 *   `/api/units` -> `{page, perPage, total, totalPages, items, next, previous}` (search: a substring, ignoring case);
 *   `POST /api/foods {name}` -> 201 IngredientFood (a new one even when the name exists, as Mealie does).
 * - Tandoor: `GET /api/food/?query=&page_size=` and `/api/unit/` -> `{count, next, previous, results}`;
 *   `POST /api/food/ {name}` -> 201 the food, the existing one when the name (or plural name) is taken, ignoring case.
 *
 * Foods and units a test puts there beforehand (`addFood`, `addUnit`) count as existing.
 */
import { randomUUID } from 'node:crypto';

export type Kind = 'mealie' | 'tandoor';
export type FakeObject = Record<string, unknown> & { id: string | number; name: string };
export interface Answer {
  status: number;
  body: unknown;
}

const UNIT_WORDS = ['g', 'kg', 'ml', 'l', 'tsp', 'tbsp', 'cup', 'cups', 'oz', 'lb', 'clove', 'cloves', 'pinch', 'el', 'tl'];

/** "200 g flour, sifted" -> 200, "g", "flour", "sifted"; what a simple ingredient parser reads. */
export function readLine(line: string): { quantity: number | null; unit: string | null; food: string | null; note: string } {
  const m = /^(\d+(?:[.,]\d+)?|\d+\/\d+)?\s*(.*)$/.exec(line.trim())!;
  let quantity: number | null = null;
  if (m[1]) quantity = m[1].includes('/') ? Number(m[1].split('/')[0]) / Number(m[1].split('/')[1]) : Number(m[1].replace(',', '.'));
  let rest = m[2]!;
  let unit: string | null = null;
  const u = quantity != null ? /^([a-zA-Z]+)\.?\s+(.*)$/.exec(rest) : null;
  if (u && UNIT_WORDS.includes(u[1]!.toLowerCase())) {
    unit = u[1]!;
    rest = u[2]!;
  }
  const [foodPart, ...noteParts] = rest.split(',');
  rest = foodPart!.trim();
  const food = rest && rest.split(/\s+/).length <= 4 ? rest : null;
  return { quantity, unit, food, note: noteParts.join(',').trim() };
}

export class FakeFoods {
  readonly foods: FakeObject[] = [];
  readonly units: FakeObject[] = [];
  /** `POST` bodies of foods and units created, in order ("food:flour"). */
  readonly createdNames: string[] = [];
  /** Every parser request's lines. */
  readonly parserRequests: string[][] = [];
  /** Answers for the next requests to these endpoints, in order (a 503, say); then the real answer. */
  readonly script: Answer[] = [];
  private nextId = 1;

  constructor(private readonly kind: Kind) {}

  reset(): void {
    this.foods.length = 0;
    this.units.length = 0;
    this.createdNames.length = 0;
    this.parserRequests.length = 0;
    this.script.length = 0;
  }

  addFood(name: string): FakeObject {
    return this.make('food', name);
  }

  addUnit(name: string): FakeObject {
    return this.make('unit', name);
  }

  has(kind: 'food' | 'unit', id: unknown): boolean {
    return (kind === 'food' ? this.foods : this.units).some((o) => o.id === id);
  }

  private make(kind: 'food' | 'unit', name: string): FakeObject {
    const now = new Date().toISOString();
    const o: FakeObject =
      this.kind === 'mealie'
        ? kind === 'food'
          ? { id: randomUUID(), name, pluralName: null, description: '', extras: {}, onHand: false, labelId: null, aliases: [], label: null, createdAt: now, updatedAt: now }
          : { id: randomUUID(), name, pluralName: null, description: '', extras: {}, onHand: false, fraction: true, abbreviation: '', pluralAbbreviation: '', useAbbreviation: false, aliases: [], createdAt: now, updatedAt: now }
        : kind === 'food'
          ? { id: this.nextId++, name, plural_name: null, description: '', shopping: '', recipe: null, url: '', properties: [], fdc_id: null, food_onhand: false, supermarket_category: null, parent: null, numchild: 0, full_name: name, ignore_shopping: false }
          : { id: this.nextId++, name, plural_name: null, description: '', base_unit: null, open_data_slug: null };
    (kind === 'food' ? this.foods : this.units).push(o);
    return o;
  }

  private named(kind: 'food' | 'unit', name: string): FakeObject | undefined {
    const n = name.toLowerCase();
    return (kind === 'food' ? this.foods : this.units).find((o) =>
      [o.name, o.pluralName, o.plural_name, o.abbreviation].some((x) => typeof x === 'string' && x.toLowerCase() === n),
    );
  }

  /** The answer for a request to these endpoints, or undefined when it is not one of them. */
  handle(method: string, url: URL, body: Buffer): Answer | undefined {
    const route = this.route(method, url.pathname);
    if (!route) return undefined;
    const scripted = this.script.shift();
    if (scripted) return scripted;
    return route(url, body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {});
  }

  private route(method: string, p: string): ((url: URL, body: Record<string, unknown>) => Answer) | undefined {
    const lists: Record<string, 'food' | 'unit'> = this.kind === 'mealie' ? { '/api/foods': 'food', '/api/units': 'unit' } : { '/api/food/': 'food', '/api/unit/': 'unit' };
    const kind = lists[p];
    if (this.kind === 'mealie' && method === 'POST' && p === '/api/parser/ingredients') return (_u, b) => this.parse(b);
    if (kind && method === 'GET') return (u) => this.list(kind, u);
    if (kind && method === 'POST') return (_u, b) => this.create(kind, b);
    return undefined;
  }

  private parse(b: Record<string, unknown>): Answer {
    const lines = b.ingredients;
    if (!Array.isArray(lines) || !lines.every((l) => typeof l === 'string')) {
      return { status: 422, body: { detail: [{ type: 'missing', loc: ['body', 'ingredients'], msg: 'Field required', input: b }] } };
    }
    this.parserRequests.push(lines);
    return {
      status: 200,
      body: lines.map((line: string) => {
        const r = readLine(line);
        const unit = r.unit ? (this.named('unit', r.unit) ?? { name: r.unit, pluralName: null, description: '', extras: {}, fraction: true, abbreviation: '', pluralAbbreviation: '', useAbbreviation: false, aliases: [] }) : null;
        const food = r.food ? (this.named('food', r.food) ?? { name: r.food, pluralName: null, description: '', extras: {}, labelId: null, aliases: [] }) : null;
        return {
          input: line,
          confidence: { average: food ? 0.9 : 0.2, comment: r.note ? 0.9 : null, name: null, unit: unit ? 0.95 : null, quantity: r.quantity != null ? 0.99 : null, food: food ? 0.9 : 0.1 },
          ingredient: {
            quantity: r.quantity ?? 0, unit, food, note: r.note, isFood: Boolean(food), disableAmount: false,
            display: line, title: null, originalText: line, referenceId: randomUUID(),
          },
        };
      }),
    };
  }

  private list(kind: 'food' | 'unit', u: URL): Answer {
    const term = (u.searchParams.get(this.kind === 'mealie' ? 'search' : 'query') ?? '').toLowerCase();
    const all = (kind === 'food' ? this.foods : this.units).filter((o) => o.name.toLowerCase().includes(term));
    if (this.kind === 'mealie') {
      const perPage = Number(u.searchParams.get('perPage') ?? 50);
      return { status: 200, body: { page: 1, perPage, total: all.length, totalPages: Math.max(1, Math.ceil(all.length / perPage)), items: all.slice(0, perPage), next: null, previous: null } };
    }
    const size = Number(u.searchParams.get('page_size') ?? 25);
    return { status: 200, body: { count: all.length, next: null, previous: null, results: all.slice(0, size) } };
  }

  private create(kind: 'food' | 'unit', b: Record<string, unknown>): Answer {
    const name = typeof b.name === 'string' ? b.name.trim() : '';
    if (!name) return this.kind === 'mealie' ? { status: 422, body: { detail: [{ type: 'missing', loc: ['body', 'name'], msg: 'Field required' }] } } : { status: 400, body: { name: ['This field is required.'] } };
    // Tandoor's serializer answers the food or unit it already has by that name.
    const existing = this.kind === 'tandoor' ? this.named(kind, name) : undefined;
    if (existing) return { status: 201, body: existing };
    this.createdNames.push(`${kind}:${name}`);
    return { status: 201, body: this.make(kind, name) };
  }
}
