/** Build step: writes the workflow bundle that production workers load instead of bundling at start. */
import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { bundleWorkflows } from '../runtime/worker.js';

const code = await bundleWorkflows();
const out = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));
await fs.writeFile(out, code);
console.log(`wrote ${out} (${(code.length / 1024).toFixed(0)} KiB)`);
