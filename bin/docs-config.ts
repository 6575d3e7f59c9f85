/** `npm run docs:config`: writes docs/configuration.md from the settings rows (core/config.ts and each service's configuration.ts). */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configurationReference } from '../runtime/config.js';

const file = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
fs.writeFileSync(file, configurationReference());
console.log(`wrote ${file}`);
