import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { PhaseEntry, RecipeOptions, RecipeResults } from './contract.js';
import type { ExtractionRecord } from './extract.js';
import { Job } from '../db/entities/job.js';

/**
 * A recipe queue item beyond its generic `job` row (status, error and timestamps live there): the post's URL, its
 * phases and results, and what the recipe manager created. One row per item, keyed by the job id; deleting the job
 * deletes it.
 */
export const RecipeItem = defineEntity({
  name: 'RecipeItem',
  tableName: 'recipe_item',
  properties: (p) => ({
    jobId: () => p.manyToOne(Job).mapToPk().joinColumn('job_id').deleteRule('cascade').primary(),
    /** The URL as submitted, without its fragment and tracking parameters: what is fetched and shown. */
    url: p.text(),
    /** The comparison key of the URL (recipes/url.ts): one item per post, whatever link variant was sent. */
    urlKey: p.text(),
    phases: p.json<PhaseEntry[]>(),
    results: p.json<RecipeResults>().default('{}' as never),
    /**
     * What extraction found beyond the text (`via`, the title, a schema.org Recipe the page carries): parsing
     * reads it. Internal; not shown.
     */
    extraction: p.json<ExtractionRecord>().nullable(),
    /** The recipe manager (`mealie`, `tandoor`) and its id of the recipe created (slug or id): a retried upload reuses it. */
    manager: p.string().nullable(),
    managerRecipeId: p.string().nullable(),
    /** What the item asked for beyond its URL (language, units); unset ones come from the configuration. */
    options: p.json<RecipeOptions>().nullable(),
    /** How many times the item was run (1 + retries). */
    runs: p.integer().default(1),
  }),
  uniques: [{ name: 'recipe_item_url_key_unique', properties: ['urlKey'] }],
});
export type RecipeItem = InferEntity<typeof RecipeItem>;
