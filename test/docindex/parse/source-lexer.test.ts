import { sourceCases } from './source-cases.js';

// The same cases as source.test.ts with no grammar loaded: the line lexer's path, which files take when their
// grammar is not loaded or cannot parse them.
sourceCases();
