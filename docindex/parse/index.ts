/**
 * The documentation index's pure core: parsing files into snippets, reading the per-repository config file and
 * selecting the files to index. No I/O anywhere below this folder, except loading the tree-sitter grammars'
 * WebAssembly once per process (code/grammar.ts).
 */
export { parseFile, loadSourceGrammars, detectKind, countTokens, TOKENIZER_ENCODING } from './parse.js';
export type { ParseOptions, ParsedSnippet, SnippetType, DocKind } from './parse.js';
export { parseRepoConfig, repoConfigSchema, CONFIG_FILE_NAMES, findConfigFile, defaultRepoConfig } from './config.js';
export type { RepoConfig, PreviousVersion, ConfigFileName } from './config.js';
export { selectFiles, ALWAYS_SKIPPED_DIRS } from './select.js';
export type { FileSelection } from './select.js';
