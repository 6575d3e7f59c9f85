import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Knex expands a JS array bound to `?` into a comma list, so arrays go to Postgres as one JSON parameter:
 * `where id = any(${TEXT_ARRAY})` with `[textArray(ids)]`.
 */
export const TEXT_ARRAY = 'array(select json_array_elements_text(?::json))';
export const textArray = (values: readonly string[]): string => JSON.stringify(values);

/**
 * A piece of SQL with the values of its `?` placeholders, in order. Pieces are put together with `sql`, `join` and
 * `raw`, each carrying its own values, so a value always binds to its own placeholder whatever the building order.
 */
export class Sql {
  constructor(
    readonly text: string,
    readonly params: readonly unknown[],
  ) {}
}

/** `` sql`a = ${value} and ${fragment}` ``: a value binds to a `?`; a Sql fragment goes in as it is, with its values. */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  let text = strings[0]!;
  const params: unknown[] = [];
  values.forEach((value, i) => {
    if (value instanceof Sql) {
      text += value.text;
      params.push(...value.params);
    } else {
      text += '?';
      params.push(value);
    }
    text += strings[i + 1]!;
  });
  return new Sql(text, params);
}

/** SQL written by the program (a name, an operator, a number it computed): never text that came from outside. */
export const raw = (text: string): Sql => new Sql(text, []);

/** The fragments one after another, `separator` between them. */
export const join = (fragments: readonly Sql[], separator = ', '): Sql =>
  new Sql(fragments.map((f) => f.text).join(separator), fragments.flatMap((f) => f.params));

/** Runs a piece of SQL built with `sql`: its text and its values, in order. */
export const execute = <T = Record<string, unknown>[]>(em: EntityManager, query: Sql): Promise<T> => em.execute(query.text, [...query.params]) as Promise<T>;
