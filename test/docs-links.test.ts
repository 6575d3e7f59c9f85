import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link in the README, docs/ and bench/README.md leads somewhere: to a file that exists and, for a
 * `#anchor` into a Markdown file, to a heading of that file. Pages move and headings get renamed; this catches the
 * links left behind.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const PAGES = [
  'README.md',
  'bench/README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The lines outside fenced code blocks: a `#` or `[x](y)` inside a block is code, not a heading or a link. */
function proseLines(md: string): string[] {
  let fenced = false;
  return md.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens; a repeated one gets -1, -2, ... */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of proseLines(md)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** The relative link targets of a page (inline code and fenced blocks left out). */
function relativeLinks(md: string): string[] {
  const text = proseLines(md).join('\n').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** The links of `page` (a path from the repository root) that lead nowhere, each with the reason. */
function brokenLinks(page: string, md: string, read: (file: string) => string | null): string[] {
  const broken: string[] = [];
  for (const target of relativeLinks(md)) {
    const [file, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURIComponent(file)));
    const content = read(resolved);
    if (content === null) broken.push(`${target}: no file ${resolved}`);
    else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(content).has(anchor)) {
      broken.push(`${target}: no heading #${anchor} in ${resolved}`);
    }
  }
  return broken;
}

function readFromRepository(file: string): string | null {
  const full = path.join(ROOT, file);
  if (!fs.existsSync(full)) return null;
  return fs.statSync(full).isDirectory() ? '' : fs.readFileSync(full, 'utf8');
}

describe('documentation links', () => {
  it.each(PAGES)('%s links only to files and headings that exist', (page) => {
    expect(brokenLinks(page, fs.readFileSync(path.join(ROOT, page), 'utf8'), readFromRepository)).toEqual([]);
  });

  it('finds a missing file, a missing heading, and accepts GitHub-style anchors', () => {
    const files: Record<string, string> = {
      'docs/a.md': '# Page\n\n## Why `x/y` works, mostly\n\n## Twice\n\n## Twice\n\n```sh\n# not a heading\n```\n',
    };
    const read = (f: string): string | null => files[f] ?? null;
    const md = [
      '[ok](a.md#why-xy-works-mostly) [ok](a.md#twice-1) [ok](#page) [ok](https://example.com/x.md#nope)',
      '[gone](b.md) [no heading](a.md#not-a-heading) `[code](c.md)`',
    ].join('\n');
    expect(brokenLinks('docs/a.md', md, read)).toEqual(['b.md: no file docs/b.md', 'a.md#not-a-heading: no heading #not-a-heading in docs/a.md']);
  });
});
