import { createPushActivities } from '../activities/push.js';
import type { ServiceModule } from '../runtime/service.js';
import { createRecipeActivities } from './activities.js';
import { recipesConfiguration } from './configuration.js';
import { RecipeItem } from './entities.js';
import { recipeKind } from './kind.js';
import { migrations } from './migrations/index.js';
import { recipesPool } from './pool.js';
import { recipeRoutes } from './routes.js';

/** The recipe queue (docs/recipes.md): a social-media post, through a language model, to Mealie or Tandoor. */
export const recipesService: ServiceModule = {
  name: 'recipes',
  kinds: [recipeKind],
  queues: { recipes: (deps) => ({ ...createRecipeActivities(deps), ...createPushActivities(deps) }) },
  pools: [recipesPool],
  configuration: recipesConfiguration,
  workflows: new URL('./workflow.ts', import.meta.url),
  routes: [recipeRoutes],
  entities: [RecipeItem],
  migrations,
};
