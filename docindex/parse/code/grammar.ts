import { createRequire } from 'node:module';
import path from 'node:path';
import type * as TreeSitter from '@vscode/tree-sitter-wasm';

/**
 * Tree-sitter grammars (WebAssembly, from @vscode/tree-sitter-wasm) for the source languages that are split by
 * declarations. Loading is asynchronous and parsing is not, so the parser stays synchronous: `loadGrammars` loads
 * the runtime and the grammars a set of files needs, once per process, and `parseTree` uses whatever is loaded
 * (null for a language not loaded, and the caller keeps its line lexer).
 */
export type Tree = TreeSitter.Tree;
export type SyntaxNode = TreeSitter.Node;

/** Grammar file (tree-sitter-<name>.wasm) per source language (languages.ts). */
const GRAMMAR: Record<string, string> = {
  ts: 'typescript',
  tsx: 'tsx',
  js: 'javascript',
  jsx: 'javascript',
  python: 'python',
  go: 'go',
  rust: 'rust',
  java: 'java',
};

/** Larger inputs keep the line lexer (the crawl reads at most 1 MB per file, docindex/pipeline.ts). */
const MAX_CHARS = 2_000_000;
/**
 * A parse that takes longer than this is abandoned and the line lexer used: 100 ms plus 1 ms per 1000 characters,
 * several times what a parse takes (5 to 10 characters per microsecond), but bounded for input that sends the
 * grammar's error recovery into long searches (thousands of unclosed strings or brackets).
 */
function budgetMs(text: string): number {
  return 100 + text.length / 1000;
}

const require = createRequire(import.meta.url);
let runtime: Promise<typeof TreeSitter | null> | undefined;
const loading = new Map<string, Promise<void>>();
const parsers = new Map<string, TreeSitter.Parser>();

function wasmDir(): string {
  return path.dirname(require.resolve('@vscode/tree-sitter-wasm'));
}

function loadRuntime(): Promise<typeof TreeSitter | null> {
  runtime ??= (async () => {
    const ts = require('@vscode/tree-sitter-wasm') as typeof TreeSitter;
    const wasm = path.join(wasmDir(), 'tree-sitter.wasm');
    await ts.Parser.init({ locateFile: () => wasm });
    return ts;
  })().catch(() => null);
  return runtime;
}

/** Whether a source language has a grammar at all. */
export function hasGrammar(language: string): boolean {
  return Object.hasOwn(GRAMMAR, language);
}

/**
 * Loads the grammars of these source languages (others are ignored). Never rejects: a grammar that fails to load
 * leaves its language on the line lexer, and is not tried again.
 */
export async function loadGrammars(languages: Iterable<string>): Promise<void> {
  const names = new Set<string>();
  for (const l of languages) if (hasGrammar(l)) names.add(GRAMMAR[l]!);
  await Promise.all([...names].map(loadGrammar));
}

function loadGrammar(name: string): Promise<void> {
  let p = loading.get(name);
  if (!p) {
    p = (async () => {
      const ts = await loadRuntime();
      if (!ts) return;
      const language = await ts.Language.load(path.join(wasmDir(), `tree-sitter-${name}.wasm`));
      const parser = new ts.Parser();
      parser.setLanguage(language);
      parsers.set(name, parser);
    })().catch(() => undefined);
    loading.set(name, p);
  }
  return p;
}

/**
 * The syntax tree of `text`, or null when the language's grammar is not loaded, the text is too large, or the parse
 * fails or runs over its time budget. The caller must `delete()` the tree (WebAssembly memory is not collected).
 */
export function parseTree(language: string, text: string): Tree | null {
  const parser = hasGrammar(language) ? parsers.get(GRAMMAR[language]!) : undefined;
  if (!parser || text.length > MAX_CHARS) return null;
  const deadline = performance.now() + budgetMs(text);
  try {
    const tree = parser.parse(text, null, { progressCallback: () => performance.now() > deadline });
    if (!tree) parser.reset();
    return tree;
  } catch {
    parser.reset();
    return null;
  }
}
