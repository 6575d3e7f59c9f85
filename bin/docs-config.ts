/** `npm run docs:config`: writes docs/configuration.md from the settings table in core/config.ts. */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configurationReference } from '../core/config.js';

const file = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
fs.writeFileSync(file, configurationReference());
console.log(`wrote ${file}`);
