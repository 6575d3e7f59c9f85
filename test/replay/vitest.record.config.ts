import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/** `npm run record-histories`: the recorder alone, with the suite's servers and reporters. */
export default defineConfig({ ...base, test: { ...base.test, include: ['test/replay/record-histories.ts'] } });
