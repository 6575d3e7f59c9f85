import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261123000000_recipes } from './Migration20261123000000_recipes.js';
import { Migration20261126000000_recipe_options } from './Migration20261126000000_recipe_options.js';

/** This service's committed migrations; the platform runs every service's in the order of their names (db/migrations/index.ts). */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261123000000_recipes', class: Migration20261123000000_recipes },
  { name: 'Migration20261126000000_recipe_options', class: Migration20261126000000_recipe_options },
];
