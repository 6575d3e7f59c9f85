/**
 * `npm run bench -- <name>`: prints figures; targets are judged from these, never from timed tests.
 * Benchmarks provision their own embedded PostgreSQL (and Temporal where needed) in a temporary directory.
 */
import { embed } from './embed.js';
import { events } from './events.js';
import { transcription } from './transcription.js';
import { recipes } from './recipes.js';
import { index } from './index.js';
import { context } from './context.js';
import { quality } from './quality.js';
import { ondemand } from './ondemand.js';
import { api } from './api.js';
import { scale } from './scale.js';

const benches: Record<string, () => Promise<void>> = { events, transcription, index, embed, recipes, context, api, quality, ondemand, scale };

const name = process.argv[2];
if (!name || !benches[name]) {
  console.error(`usage: npm run bench -- <${Object.keys(benches).join('|')}>`);
  process.exit(2);
}
await benches[name]();
