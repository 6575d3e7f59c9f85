import { extension } from './util.js';

export type DocKind = 'markdown' | 'rst' | 'text' | 'notebook' | 'source';

/** How a source language is split: by declarations (a scanner exists) or by windows of lines. */
export type SourceFamily = 'js' | 'python' | 'go' | 'rust' | 'java' | 'lines';

interface SourceLang {
  language: string;
  family: SourceFamily;
}

const DOC_KINDS: Record<string, DocKind> = {
  md: 'markdown',
  mdx: 'markdown',
  markdown: 'markdown',
  rst: 'rst',
  txt: 'text',
  ipynb: 'notebook',
};

const SOURCE: Record<string, SourceLang> = {
  ts: { language: 'ts', family: 'js' },
  mts: { language: 'ts', family: 'js' },
  cts: { language: 'ts', family: 'js' },
  tsx: { language: 'tsx', family: 'js' },
  js: { language: 'js', family: 'js' },
  mjs: { language: 'js', family: 'js' },
  cjs: { language: 'js', family: 'js' },
  jsx: { language: 'jsx', family: 'js' },
  py: { language: 'python', family: 'python' },
  pyi: { language: 'python', family: 'python' },
  go: { language: 'go', family: 'go' },
  rs: { language: 'rust', family: 'rust' },
  java: { language: 'java', family: 'java' },
  c: { language: 'c', family: 'lines' },
  h: { language: 'c', family: 'lines' },
  cc: { language: 'cpp', family: 'lines' },
  cpp: { language: 'cpp', family: 'lines' },
  cxx: { language: 'cpp', family: 'lines' },
  hh: { language: 'cpp', family: 'lines' },
  hpp: { language: 'cpp', family: 'lines' },
  hxx: { language: 'cpp', family: 'lines' },
  cs: { language: 'csharp', family: 'lines' },
  rb: { language: 'ruby', family: 'lines' },
  php: { language: 'php', family: 'lines' },
  kt: { language: 'kotlin', family: 'lines' },
  kts: { language: 'kotlin', family: 'lines' },
  swift: { language: 'swift', family: 'lines' },
  scala: { language: 'scala', family: 'lines' },
  sc: { language: 'scala', family: 'lines' },
  sh: { language: 'bash', family: 'lines' },
  bash: { language: 'bash', family: 'lines' },
  zsh: { language: 'bash', family: 'lines' },
  ps1: { language: 'powershell', family: 'lines' },
  lua: { language: 'lua', family: 'lines' },
  r: { language: 'r', family: 'lines' },
  dart: { language: 'dart', family: 'lines' },
  ex: { language: 'elixir', family: 'lines' },
  exs: { language: 'elixir', family: 'lines' },
  erl: { language: 'erlang', family: 'lines' },
  hs: { language: 'haskell', family: 'lines' },
  ml: { language: 'ocaml', family: 'lines' },
  mli: { language: 'ocaml', family: 'lines' },
  fs: { language: 'fsharp', family: 'lines' },
  clj: { language: 'clojure', family: 'lines' },
  cljs: { language: 'clojure', family: 'lines' },
  jl: { language: 'julia', family: 'lines' },
  zig: { language: 'zig', family: 'lines' },
  nim: { language: 'nim', family: 'lines' },
  pl: { language: 'perl', family: 'lines' },
  pm: { language: 'perl', family: 'lines' },
  m: { language: 'objectivec', family: 'lines' },
  mm: { language: 'objectivec', family: 'lines' },
  groovy: { language: 'groovy', family: 'lines' },
  sql: { language: 'sql', family: 'lines' },
  vue: { language: 'vue', family: 'lines' },
  svelte: { language: 'svelte', family: 'lines' },
  astro: { language: 'astro', family: 'lines' },
  sol: { language: 'solidity', family: 'lines' },
  proto: { language: 'protobuf', family: 'lines' },
  graphql: { language: 'graphql', family: 'lines' },
  gql: { language: 'graphql', family: 'lines' },
};

/**
 * What kind of document a path is, from its extension (case-insensitive); null when Gristmill does not index it
 * (data, configuration, images, build files, files without an extension).
 */
export function detectKind(filePath: string): DocKind | null {
  if (typeof filePath !== 'string') return null;
  const ext = extension(filePath);
  if (!ext) return null;
  const doc = DOC_KINDS[ext];
  if (doc) return doc;
  if (Object.hasOwn(SOURCE, ext)) return 'source';
  return null;
}

export function sourceLanguage(filePath: string): SourceLang {
  const ext = extension(filePath);
  return (Object.hasOwn(SOURCE, ext) ? SOURCE[ext] : undefined) ?? { language: ext || 'text', family: 'lines' };
}

const FENCE_ALIASES: Record<string, string> = {
  typescript: 'ts',
  mts: 'ts',
  cts: 'ts',
  javascript: 'js',
  node: 'js',
  nodejs: 'js',
  mjs: 'js',
  cjs: 'js',
  ecmascript: 'js',
  es6: 'js',
  py: 'python',
  py3: 'python',
  python3: 'python',
  ipython: 'python',
  ipython3: 'python',
  pycon: 'python',
  pyi: 'python',
  sh: 'bash',
  shell: 'bash',
  zsh: 'bash',
  console: 'bash',
  terminal: 'bash',
  shellscript: 'bash',
  'shell-session': 'bash',
  shellsession: 'bash',
  'bash-session': 'bash',
  golang: 'go',
  rs: 'rust',
  yml: 'yaml',
  jsonc: 'json',
  json5: 'json',
  'c++': 'cpp',
  cc: 'cpp',
  cxx: 'cpp',
  hpp: 'cpp',
  'c#': 'csharp',
  cs: 'csharp',
  dotnet: 'csharp',
  kt: 'kotlin',
  kts: 'kotlin',
  rb: 'ruby',
  md: 'markdown',
  ps1: 'powershell',
  pwsh: 'powershell',
  ps: 'powershell',
  docker: 'dockerfile',
  txt: 'text',
  plaintext: 'text',
  plain: 'text',
  none: 'text',
  gql: 'graphql',
  objc: 'objectivec',
  'objective-c': 'objectivec',
  tf: 'hcl',
  terraform: 'hcl',
  htm: 'html',
  xhtml: 'html',
  'c++header': 'cpp',
  proto: 'protobuf',
  proto3: 'protobuf',
  postgresql: 'sql',
  postgres: 'sql',
  mysql: 'sql',
  psql: 'sql',
  bat: 'batch',
  cmd: 'batch',
};

/**
 * Normalises a fence info string (```` ```ts title="a.ts" ````, ```` ```{python} ````, ```` ```js{1,3} ````,
 * ```` ```language-js ````, ```` ```jsx:title=x ````) or a notebook/rst language to a short lower-case name.
 */
export function normalizeLanguage(info: string | null | undefined): string | null {
  if (!info) return null;
  let s = info.trim();
  if (!s) return null;
  if (s.startsWith('{')) s = s.slice(1).replace(/[},\s].*$/, '');
  s = s.split(/[\s{,:]/)[0] ?? '';
  s = s.replace(/^\.|^language-|^lang-/, '').replace(/[^\w#+.-]+$/, '').toLowerCase();
  if (!s || s.length > 30 || !/^[\w#+.-]+$/.test(s)) return null;
  return FENCE_ALIASES[s] ?? s;
}

/** Languages whose code blocks are usually one short command (install lines): they get a lower size threshold. */
export function isCommandLanguage(language: string | null): boolean {
  return language === 'bash' || language === 'powershell' || language === 'batch' || language === 'fish';
}

