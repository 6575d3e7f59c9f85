/**
 * Knex expands a JS array bound to `?` into a comma list, so arrays go to Postgres as one JSON parameter:
 * `where id = any(${TEXT_ARRAY})` with `[textArray(ids)]`.
 */
export const TEXT_ARRAY = 'array(select json_array_elements_text(?::json))';
export const textArray = (values: readonly string[]): string => JSON.stringify(values);
