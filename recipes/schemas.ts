import type { SchemaObject } from 'ajv';
import recipesCreate from './schemas/recipes.create.schema.json' with { type: 'json' };
import recipesExtractResult from './schemas/recipes.extract-result.schema.json' with { type: 'json' };
import recipesExtractStreamQuery from './schemas/recipes.extract-stream.query.schema.json' with { type: 'json' };
import recipesItem from './schemas/recipes.item.schema.json' with { type: 'json' };
import recipesListQuery from './schemas/recipes.list.query.schema.json' with { type: 'json' };
import recipesList from './schemas/recipes.list.schema.json' with { type: 'json' };
import recipesPhase from './schemas/recipes.phase.schema.json' with { type: 'json' };
import recipesResults from './schemas/recipes.results.schema.json' with { type: 'json' };
import recipesRetry from './schemas/recipes.retry.schema.json' with { type: 'json' };
import recipesStreamQuery from './schemas/recipes.stream.query.schema.json' with { type: 'json' };
import recipesUpdate from './schemas/recipes.update.schema.json' with { type: 'json' };

/** The JSON Schemas of the recipe queue's routes, named for validation and the OpenAPI document (api/routes.ts). */
export const recipesSchemas = {
  recipesCreate: recipesCreate as SchemaObject,
  recipesExtractResult: recipesExtractResult as SchemaObject,
  recipesExtractStreamQuery: recipesExtractStreamQuery as SchemaObject,
  recipesItem: recipesItem as SchemaObject,
  recipesListQuery: recipesListQuery as SchemaObject,
  recipesList: recipesList as SchemaObject,
  recipesPhase: recipesPhase as SchemaObject,
  recipesResults: recipesResults as SchemaObject,
  recipesRetry: recipesRetry as SchemaObject,
  recipesStreamQuery: recipesStreamQuery as SchemaObject,
  recipesUpdate: recipesUpdate as SchemaObject,
};
