import type { SourceFamily } from '../languages.js';
import { scanBraceLines, scanPythonLines, type LineInfo } from '../lexer.js';
import { indentWidth, isBlank } from '../util.js';
import type { Declaration, Outline } from './outline.js';

/**
 * The outline of a source file from the line lexer (../lexer.ts): declarations start on unindented lines at bracket
 * depth 0 that do not start inside a string or comment, and are recognised by their first line. The fallback for
 * files the grammars cannot take (tree-outline.ts); null when the lexer's output does not line up with the text.
 */
export function lineOutline(lines: readonly string[], text: string, family: Exclude<SourceFamily, 'lines'>): Outline | null {
  const infos = family === 'python' ? scanPythonLines(text) : scanBraceLines(text, family);
  // Cannot happen (the lexers emit one entry per line); windows of lines are the safe answer if it ever does.
  if (infos.length !== lines.length) return null;
  const importish = importLines(lines, infos, family);
  const found: { line: number; start: number; title: string }[] = [];
  let floor = 0;
  for (let i = 0; i < lines.length; i++) {
    const info = infos[i]!;
    if (info.depth !== 0 || info.inString || info.inComment || !info.hasCode) continue;
    const line = lines[i]!;
    const c = line.charCodeAt(0);
    if (c === 32 || c === 9 || importish[i]) continue;
    const title = declarationTitle(line.length > 400 ? line.slice(0, 400) : line, family);
    if (!title) continue;
    found.push({ line: i, start: attachUp(lines, infos, i, floor, 0, family), title });
    floor = i + 1;
  }
  const decls: Declaration[] = found.map((d, k) => {
    const end = k + 1 < found.length ? found[k + 1]!.start : lines.length;
    return { ...d, members: innerBoundaries(lines, infos, d.start, end, d.line, family) };
  });
  const comment = new Uint8Array(lines.length);
  for (let i = 0; i < lines.length; i++) if (!infos[i]!.hasCode && !isBlank(lines[i]!)) comment[i] = 1;
  return { decls, importish, comment };
}

const JS_PREFIX = String.raw`(?:export\s+(?:default\s+)?)?(?:declare\s+)?`;
const JS_FUNCTION = new RegExp(String.raw`^${JS_PREFIX}(?:async\s+)?function\b\s*\*?\s*([\w$]+)?`);
const JS_CLASS = new RegExp(String.raw`^${JS_PREFIX}(?:abstract\s+)?class\b(?:\s+([\w$]+))?`);
const JS_INTERFACE = new RegExp(String.raw`^${JS_PREFIX}interface\s+([\w$]+)`);
const JS_TYPE = new RegExp(String.raw`^${JS_PREFIX}type\s+([\w$]+)\s*(?:<|=)`);
const JS_ENUM = new RegExp(String.raw`^${JS_PREFIX}(?:const\s+)?enum\s+([\w$]+)`);
const JS_NAMESPACE = new RegExp(String.raw`^${JS_PREFIX}(?:namespace|module)\s+([\w$.]+|'[^']*'|"[^"]*")`);
const JS_VARIABLE = new RegExp(String.raw`^${JS_PREFIX}(?:const|let|var)\s+([\w$]+)\s*(?::[^=]*)?(?:=\s*(.*))?$`);
const JS_EXPORTS = /^(?:module\.)?exports(?:\.([\w$]+))?\s*=\s*(.*)$/;

function jsIsFunction(rhs: string): boolean {
  if (/^(?:async\s+)?function\b/.test(rhs)) return true;
  if (/^(?:async\s+)?[\w$]+\s*=>/.test(rhs)) return true;
  if (/^(?:async\s*)?(?:<[^>]*>\s*)?\(/.test(rhs)) return rhs.includes('=>') || /\(\s*$|,\s*$/.test(rhs);
  return false;
}

function declarationTitle(line: string, family: SourceFamily): string | null {
  let m: RegExpExecArray | null;
  switch (family) {
    case 'js':
      if ((m = JS_FUNCTION.exec(line))) return m[1] ? `function ${m[1]}` : 'export default function';
      if ((m = JS_CLASS.exec(line))) return `class ${m[1] ?? 'default'}`;
      if ((m = JS_INTERFACE.exec(line))) return `interface ${m[1]}`;
      if ((m = JS_TYPE.exec(line))) return `type ${m[1]}`;
      if ((m = JS_ENUM.exec(line))) return `enum ${m[1]}`;
      if ((m = JS_NAMESPACE.exec(line))) return `namespace ${m[1]}`;
      if (/^declare\s+global\b/.test(line)) return 'declare global';
      if ((m = JS_VARIABLE.exec(line))) {
        const rhs = (m[2] ?? '').trim();
        return jsIsFunction(rhs) ? `function ${m[1]}` : `const ${m[1]}`;
      }
      if ((m = JS_EXPORTS.exec(line))) {
        const rhs = (m[2] ?? '').trim();
        if (/^[\w$.]+;?$/.test(rhs)) return null; // `module.exports = Router;` stays with what it exports
        if (!m[1]) return 'module.exports';
        return jsIsFunction(rhs) ? `function ${m[1]}` : `exports.${m[1]}`;
      }
      if (/^export\s+default\s+(?![\w$.]+;?\s*(?:\/\/.*)?$)/.test(line)) return 'export default';
      // Test suites read like usage examples: describe('Router', ...) is a declaration too.
      if ((m = /^(describe|suite|test|it)(?:\.\w+)?\(\s*(['"`])(.{1,80}?)\2/.exec(line))) return `${m[1]} ${m[3]}`;
      return null;
    case 'python':
      if ((m = /^(?:async\s+)?def\s+(\w+)/.exec(line))) return `def ${m[1]}`;
      if ((m = /^class\s+(\w+)/.exec(line))) return `class ${m[1]}`;
      return null;
    case 'go':
      if ((m = /^func\s*\(\s*(?:\w+\s+)?\*?\s*([\w.]+)(?:\[[^\]]*\])?\s*\)\s*(\w+)/.exec(line))) return `func ${m[1]}.${m[2]}`;
      if ((m = /^func\s+(\w+)/.exec(line))) return `func ${m[1]}`;
      if ((m = /^type\s+(\w+)/.exec(line))) return `type ${m[1]}`;
      if ((m = /^(var|const|type)\s*\(/.exec(line))) return `${m[1]} (…)`;
      if ((m = /^(var|const)\s+(\w+)/.exec(line))) return `${m[1]} ${m[2]}`;
      return null;
    case 'rust': {
      const rest = line.replace(/^pub(?:\s*\([^)]*\))?\s+/, '');
      if ((m = /^(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+(?:"[^"]*"\s+)?)?fn\s+(\w+)/.exec(rest))) return `fn ${m[1]}`;
      if ((m = /^(struct|enum|union|type|mod|const|static)\s+(?:mut\s+)?(\w+)/.exec(rest))) return `${m[1]} ${m[2]}`;
      if ((m = /^(?:unsafe\s+)?(?:auto\s+)?trait\s+(\w+)/.exec(rest))) return `trait ${m[1]}`;
      if ((m = /^macro_rules!\s*(\w+)/.exec(rest))) return `macro ${m[1]}`;
      if ((m = /^(?:unsafe\s+)?impl\b(.*)$/.exec(rest))) return rustImplTitle(m[1]!);
      return null;
    }
    case 'java':
      if ((m = /^(?:(?:public|protected|private|abstract|final|static|sealed|non-sealed|strictfp)\s+)*(class|interface|enum|record|@interface)\s+(\w+)/.exec(line))) {
        return `${m[1] === '@interface' ? 'annotation' : m[1]} ${m[2]}`;
      }
      return null;
    default:
      return null;
  }
}

function rustImplTitle(rest: string): string {
  let s = rest.trimStart();
  if (s.startsWith('<')) {
    let depth = 0;
    let k = 0;
    for (; k < s.length; k++) {
      if (s[k] === '<') depth++;
      else if (s[k] === '>' && s[k - 1] !== '-' && --depth === 0) break;
    }
    s = s.slice(k + 1);
  }
  s = s.replace(/\{.*$/, '').replace(/\s+where\b.*$/, '').trim();
  if (s.length > 100) s = `${s.slice(0, 99)}…`;
  return s ? `impl ${s}` : 'impl';
}

const IMPORT_START: Record<Exclude<SourceFamily, 'lines'>, RegExp> = {
  js: /^(?:import\b|export\s+(?:\*|type\s*\{|\{[^}]*\}\s*from\b)|(?:const|let|var)\s+[^=]+=\s*require\s*\(|require\s*\(|['"]use (?:strict|client|server)['"]|#!)/,
  python: /^(?:from\s+\S+\s+import\b|import\s|__all__\s*=|#!)/,
  go: /^(?:package\s|import\b)/,
  rust: /^(?:(?:pub(?:\s*\([^)]*\))?\s+)?use\s|extern\s+crate\b|#!\[|(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+\w+\s*;)/,
  java: /^(?:package\s|import\s)/,
};

/** Marks import/package/use statements, including the continuation lines of multi-line ones. */
function importLines(lines: readonly string[], infos: readonly LineInfo[], family: SourceFamily): Uint8Array {
  const out = new Uint8Array(lines.length);
  if (family === 'lines') return out;
  const re = IMPORT_START[family];
  let inImport = false;
  for (let i = 0; i < lines.length; i++) {
    const info = infos[i]!;
    if (info.depth === 0 && !info.inString) {
      const line = lines[i]!;
      inImport = info.hasCode ? re.test(line.length > 300 ? line.slice(0, 300) : line) || (inImport && /^\s*[)}\]]/.test(line)) : false;
      if (!info.hasCode && !isBlank(line)) continue; // comments between imports are neither
    }
    if (inImport) out[i] = 1;
  }
  return out;
}

/**
 * The first line of a declaration including the comments, doc comments and decorators directly above it (no blank
 * line in between), never above `floor`.
 */
function attachUp(lines: readonly string[], infos: readonly LineInfo[], line: number, floor: number, depth: number, family: SourceFamily): number {
  let j = line;
  while (j - 1 >= floor) {
    const k = j - 1;
    const text = lines[k]!;
    if (isBlank(text)) break;
    const info = infos[k]!;
    if (!info.hasCode) {
      j = k;
      continue;
    }
    if (info.depth === depth && !info.inString && isDecorator(text, family)) {
      j = k;
      continue;
    }
    if (info.depth > depth || info.inString) {
      // The tail of a multi-line decorator such as @Component({ ... })?
      let m = k;
      while (m - 1 >= floor && (infos[m]!.depth > depth || infos[m]!.inString)) m--;
      if (infos[m]!.depth === depth && isDecorator(lines[m]!, family)) {
        j = m;
        continue;
      }
    }
    break;
  }
  return j;
}

function isDecorator(line: string, family: SourceFamily): boolean {
  if (family === 'rust') return /^\s*#\[/.test(line);
  if (family === 'go') return false;
  return /^\s*@[\w$]/.test(line);
}

/**
 * Lines where an oversized declaration may be split: member or statement starts one level inside it (the depth
 * after its opening brace or bracket; for Python the indentation of the body), moved up over their comments and
 * decorators.
 */
function innerBoundaries(lines: readonly string[], infos: readonly LineInfo[], start: number, end: number, declLine: number, family: SourceFamily): number[] {
  const out: number[] = [];
  if (family === 'python') {
    let body = -1;
    for (let i = declLine + 1; i < end; i++) {
      const info = infos[i]!;
      if (isBlank(lines[i]!) || info.inString || !info.hasCode || info.depth !== 0) continue;
      const w = indentWidth(lines[i]!);
      if (w === 0) break;
      if (body < 0) body = w;
      if (w !== body) continue;
      const prev = prevCodeLine(lines, infos, i, declLine);
      if (prev !== null && /\\\s*$/.test(prev)) continue;
      // A decorated method: the decorator line was already the boundary, and lifting the def gives it again.
      const b = attachUp(lines, infos, i, declLine + 1, 0, family);
      if (b > declLine + 1 && out[out.length - 1] !== b) out.push(b);
    }
    return out.filter((b) => b > start);
  }
  // The body's depth: after the first line that opens a block (`class A {`, `describe('x', () => {`, `= [`).
  let body = 1;
  for (let j = declLine; j < end - 1; j++) {
    if (infos[j]!.inString || infos[j]!.inComment) continue;
    if (/[{[]\s*$/.test(stripLineComment(lines[j]!))) {
      body = Math.max(1, infos[j + 1]!.depth);
      break;
    }
  }
  for (let i = declLine + 1; i < end; i++) {
    const info = infos[i]!;
    if (info.depth !== body || info.inString || info.inComment || !info.hasCode) continue;
    const t = lines[i]!.trimStart();
    const first = t.charCodeAt(0);
    if (first === 125 || first === 41 || first === 93) continue; // a closing line
    const prev = prevCodeLine(lines, infos, i, declLine - 1);
    if (prev === null) continue;
    const last = prev.trimEnd().slice(-1);
    // A member starts after the end of the previous one (or the opening brace); lines after a decorator or an
    // unfinished expression are continuations. attachUp then lifts the boundary over comments and decorators.
    if (last !== ';' && last !== '}' && last !== '{' && last !== ',') continue;
    const b = attachUp(lines, infos, i, declLine + 1, body, family);
    if (out[out.length - 1] !== b) out.push(b);
  }
  return out.filter((b) => b > start);
}

function prevCodeLine(lines: readonly string[], infos: readonly LineInfo[], i: number, floor: number): string | null {
  for (let k = i - 1; k > floor; k--) {
    if (infos[k]!.hasCode && !isBlank(lines[k]!)) return stripLineComment(lines[k]!);
  }
  return null;
}

function stripLineComment(line: string): string {
  const k = line.indexOf(' //');
  return k >= 0 ? line.slice(0, k) : line;
}
