/**
 * Line-level lexical state for the source splitter: for every line, the bracket depth at its start and whether it
 * starts inside a string or a block comment, and whether it holds any code outside comments. A single pass over
 * the characters, aware of the string and comment syntax of each family (template literals with `${}` nesting and
 * regex literals for JS/TS, raw strings and runes for Go, raw strings, nested comments, char literals vs lifetimes
 * for Rust, text blocks for Java, triple-quoted strings for Python). Not a parser: unbalanced input degrades to
 * "depth clamped at 0" and strings that run off a line end there, so one odd line cannot swallow a file.
 */
export interface LineInfo {
  /** Depth of (), [] and {} at the start of the line. */
  depth: number;
  /** The line starts inside a string literal (template literal, triple-quoted string, raw string, ...). */
  inString: boolean;
  /** The line starts inside a block comment. */
  inComment: boolean;
  /** Some non-whitespace character of the line is outside comments. */
  hasCode: boolean;
}

export type BraceFamily = 'js' | 'go' | 'rust' | 'java';

const enum Mode {
  Code,
  LineComment,
  BlockComment,
  Single, // '...'
  Double, // "..."
  Template, // `...` (JS)
  Raw, // `...` (Go), r#"..."# (Rust)
  TextBlock, // """...""" (Java)
  TripleSingle, // '''...''' (Python)
  TripleDouble, // """...""" (Python)
}

const REGEX_PRECEDERS = new Set('(,=:[!&|?{};+-*%<>~^'.split('').map((c) => c.charCodeAt(0)));
const REGEX_KEYWORDS = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

function isIdent(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c > 127;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 13 || c === 11 || c === 12;
}

function isStringMode(m: Mode): boolean {
  return m !== Mode.Code && m !== Mode.LineComment && m !== Mode.BlockComment;
}

export function scanBraceLines(text: string, family: BraceFamily): LineInfo[] {
  const infos: LineInfo[] = [];
  const n = text.length;
  let mode = Mode.Code as Mode;
  let depth = 0;
  let hasCode = false;
  let startMode = Mode.Code as Mode;
  let startDepth = 0;
  let commentDepth = 0;
  let rawHashes = 0;
  let lastSig = 0; // last significant code character (JS regex detection)
  let noRegexBefore = 0;
  const templates: number[] = [];

  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      infos.push({ depth: startDepth, inString: isStringMode(startMode), inComment: startMode === Mode.BlockComment, hasCode });
      if (mode === Mode.LineComment) mode = Mode.Code;
      else if (mode === Mode.Single || (mode === Mode.Double && family !== 'rust')) {
        // Strings end at the line end unless the newline is escaped (JS); an unterminated one ends here.
        if (!(family === 'js' && text.charCodeAt(i - 1) === 92)) mode = Mode.Code;
      }
      startMode = mode;
      startDepth = depth;
      hasCode = false;
      continue;
    }
    switch (mode) {
      case Mode.Code: {
        if (isSpace(c)) break;
        const d = text.charCodeAt(i + 1);
        if (c === 47 /* / */) {
          if (d === 47) {
            mode = Mode.LineComment;
            i++;
            break;
          }
          if (d === 42) {
            mode = Mode.BlockComment;
            commentDepth = 1;
            i++;
            break;
          }
          hasCode = true;
          if (family === 'js' && i >= noRegexBefore && regexAllowed(text, i, lastSig)) {
            const end = scanRegex(text, i);
            if (end > 0) {
              i = end;
              lastSig = 41; // a regex is a value, like ')'
              break;
            }
            // No regex closes on this line: do not try again before its end (keeps "(/(/(/..." linear).
            noRegexBefore = end === -1 ? lineEnd(text, i) : i + 2000;
          }
          lastSig = c;
          break;
        }
        hasCode = true;
        if (c === 123 || c === 40 || c === 91) depth++;
        else if (c === 125 || c === 41 || c === 93) {
          if (depth > 0) depth--;
          if (c === 125 && templates.length && depth === templates[templates.length - 1]) {
            templates.pop();
            mode = Mode.Template;
            break;
          }
        } else if (c === 34 /* " */) {
          if (family === 'java' && d === 34 && text.charCodeAt(i + 2) === 34) {
            mode = Mode.TextBlock;
            i += 2;
          } else mode = Mode.Double;
        } else if (c === 39 /* ' */) {
          if (family === 'js') mode = Mode.Single;
          else i = skipCharLiteral(text, i, family === 'rust');
        } else if (c === 96 /* ` */) {
          if (family === 'js') mode = Mode.Template;
          else if (family === 'go') mode = Mode.Raw;
        } else if (family === 'rust' && (c === 114 || c === 98) && !isIdent(text.charCodeAt(i - 1))) {
          // r"..", r#".."#, br"..", b".."
          let j = i;
          if (text.charCodeAt(j) === 98) j++;
          if (text.charCodeAt(j) === 114) {
            j++;
            let hashes = 0;
            while (text.charCodeAt(j) === 35) {
              hashes++;
              j++;
            }
            if (text.charCodeAt(j) === 34) {
              mode = Mode.Raw;
              rawHashes = hashes;
              i = j;
            }
          } else if (j > i && text.charCodeAt(j) === 34) {
            mode = Mode.Double;
            i = j;
          }
        }
        lastSig = c;
        break;
      }
      case Mode.LineComment:
        break;
      case Mode.BlockComment:
        if (c === 42 && text.charCodeAt(i + 1) === 47) {
          commentDepth--;
          i++;
          if (commentDepth <= 0 || family !== 'rust') mode = Mode.Code;
        } else if (family === 'rust' && c === 47 && text.charCodeAt(i + 1) === 42) {
          commentDepth++;
          i++;
        }
        break;
      case Mode.Single:
      case Mode.Double:
        hasCode = true;
        if (c === 92) {
          if (text.charCodeAt(i + 1) !== 10) i++;
        } else if (c === (mode === Mode.Single ? 39 : 34)) {
          mode = Mode.Code;
          lastSig = 41;
        }
        break;
      case Mode.Template:
        hasCode = true;
        if (c === 92) {
          if (text.charCodeAt(i + 1) !== 10) i++;
        } else if (c === 96) {
          mode = Mode.Code;
          lastSig = 41;
        } else if (c === 36 && text.charCodeAt(i + 1) === 123) {
          templates.push(depth);
          depth++;
          i++;
          mode = Mode.Code;
          lastSig = 123;
        }
        break;
      case Mode.Raw:
        hasCode = true;
        if (family === 'go') {
          if (c === 96) mode = Mode.Code;
        } else if (c === 34) {
          let k = 0;
          while (k < rawHashes && text.charCodeAt(i + 1 + k) === 35) k++;
          if (k === rawHashes) {
            mode = Mode.Code;
            i += k;
          }
        }
        break;
      case Mode.TextBlock:
        hasCode = true;
        if (c === 92) {
          if (text.charCodeAt(i + 1) !== 10) i++;
        } else if (c === 34 && text.charCodeAt(i + 1) === 34 && text.charCodeAt(i + 2) === 34) {
          mode = Mode.Code;
          i += 2;
        }
        break;
      default:
        break;
    }
  }
  infos.push({ depth: startDepth, inString: isStringMode(startMode), inComment: startMode === Mode.BlockComment, hasCode });
  return infos;
}

function regexAllowed(text: string, i: number, lastSig: number): boolean {
  if (lastSig === 0 || REGEX_PRECEDERS.has(lastSig)) return true;
  if (!isIdent(lastSig)) return false;
  // The word before the slash: `return /x/` is a regex, `a / b` is a division.
  let j = i - 1;
  while (j >= 0 && isSpace(text.charCodeAt(j))) j--;
  const end = j + 1;
  while (j >= 0 && isIdent(text.charCodeAt(j))) j--;
  return end - (j + 1) <= 10 && REGEX_KEYWORDS.has(text.slice(j + 1, end));
}

/**
 * Index of the closing slash of a regex literal starting at `i` (flags are plain code); -1 when the line ends
 * first, -2 when none is found within 2000 characters.
 */
function scanRegex(text: string, i: number): number {
  let inClass = false;
  for (let j = i + 1; j < text.length && j < i + 2000; j++) {
    const c = text.charCodeAt(j);
    if (c === 10) return -1;
    if (c === 92) {
      if (text.charCodeAt(j + 1) === 10) return -1;
      j++;
    } else if (c === 91) inClass = true;
    else if (c === 93) inClass = false;
    else if (c === 47 && !inClass) return j;
  }
  return i + 2000 < text.length ? -2 : -1;
}

function lineEnd(text: string, i: number): number {
  const nl = text.indexOf('\n', i);
  return nl < 0 ? text.length : nl;
}

/** Skips a char literal ('a', '\n', '\u{1F600}'); for Rust a quote not closed that way is a lifetime ('a). */
function skipCharLiteral(text: string, i: number, rust: boolean): number {
  const d = text.charCodeAt(i + 1);
  if (d === 92) {
    for (let j = i + 2; j < text.length && j < i + 14; j++) {
      const c = text.charCodeAt(j);
      if (c === 10) return j - 1;
      if (c === 39) return j;
    }
    return i;
  }
  if (text.charCodeAt(i + 2) === 39 && d !== 10) return i + 2;
  if (d >= 0xd800 && d <= 0xdbff && text.charCodeAt(i + 3) === 39) return i + 3;
  if (rust) return i; // lifetime or label
  for (let j = i + 1; j < text.length && j < i + 8; j++) {
    const c = text.charCodeAt(j);
    if (c === 10) return j - 1;
    if (c === 39) return j;
  }
  return i;
}

export function scanPythonLines(text: string): LineInfo[] {
  const infos: LineInfo[] = [];
  const n = text.length;
  let mode = Mode.Code as Mode;
  let depth = 0;
  let hasCode = false;
  let startMode = Mode.Code as Mode;
  let startDepth = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      infos.push({ depth: startDepth, inString: isStringMode(startMode), inComment: false, hasCode });
      if (mode === Mode.LineComment) mode = Mode.Code;
      else if ((mode === Mode.Single || mode === Mode.Double) && text.charCodeAt(i - 1) !== 92) mode = Mode.Code;
      startMode = mode;
      startDepth = depth;
      hasCode = false;
      continue;
    }
    switch (mode) {
      case Mode.Code:
        if (isSpace(c)) break;
        if (c === 35 /* # */) {
          mode = Mode.LineComment;
          break;
        }
        hasCode = true;
        if (c === 40 || c === 91 || c === 123) depth++;
        else if (c === 41 || c === 93 || c === 125) {
          if (depth > 0) depth--;
        } else if (c === 39 || c === 34) {
          if (text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === c) {
            mode = c === 39 ? Mode.TripleSingle : Mode.TripleDouble;
            i += 2;
          } else mode = c === 39 ? Mode.Single : Mode.Double;
        }
        break;
      case Mode.LineComment:
        break;
      case Mode.Single:
      case Mode.Double:
        hasCode = true;
        if (c === 92) {
          if (text.charCodeAt(i + 1) !== 10) i++;
        } else if (c === (mode === Mode.Single ? 39 : 34)) mode = Mode.Code;
        break;
      case Mode.TripleSingle:
      case Mode.TripleDouble: {
        hasCode = true;
        const q = mode === Mode.TripleSingle ? 39 : 34;
        if (c === 92) {
          if (text.charCodeAt(i + 1) !== 10) i++;
        } else if (c === q && text.charCodeAt(i + 1) === q && text.charCodeAt(i + 2) === q) {
          mode = Mode.Code;
          i += 2;
        }
        break;
      }
      default:
        break;
    }
  }
  infos.push({ depth: startDepth, inString: isStringMode(startMode), inComment: false, hasCode });
  return infos;
}
