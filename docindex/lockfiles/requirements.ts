import type { Collector } from './collect.js';
import { parseRequirement } from './pep508.js';

/**
 * requirements.txt, pip's format: one requirement a line, `\` continuing a line, `#` starting a comment at a line's
 * start or after a space. Options that only say where pip downloads from (`--index-url`) are passed over; includes,
 * editables and requirements by URL or path are skipped with a warning, which never repeats the URL (it may hold
 * credentials). Every requirement is reported: the format does not say which ones are direct.
 */

// Per-requirement options (`--hash=sha256:...`, `--config-settings`) follow the requirement on its line.
const TRAILING_OPTION = /\s--?[a-z]/i;
const SOURCE_OPTIONS = new Set([
  '-i', '--index-url', '--extra-index-url', '--no-index', '-f', '--find-links', '--trusted-host', '--pre',
  '--prefer-binary', '--only-binary', '--no-binary', '--require-hashes', '--use-feature', '--config-settings',
]);
// A requirement by URL or path instead of by name: `git+https://...`, `./vendor/pkg`, `pkg-1.0-py3-none-any.whl`.
const LOCATION = /:\/\/|^[./~]|\.(whl|zip|tar\.gz)$/i;
const INCLUDE_OPTIONS = new Set(['-r', '--requirement', '-c', '--constraint']);
const EDITABLE_OPTIONS = new Set(['-e', '--editable']);

/** The lines pip reads: continuations joined, comments and blank lines gone, each with its first line's number. */
function logicalLines(content: string): { number: number; text: string }[] {
  const lines: { number: number; text: string }[] = [];
  let pending = '';
  let start = 0;
  content.split(/\r?\n/).forEach((raw, index) => {
    if (pending === '') start = index + 1;
    if (raw.endsWith('\\')) {
      pending += raw.slice(0, -1);
      return;
    }
    const text = (pending + raw).replace(/(^|\s)#.*$/, '').trim();
    pending = '';
    if (text !== '') lines.push({ number: start, text });
  });
  return lines;
}

function readOption(line: { number: number; text: string }, out: Collector): void {
  const option = /^--?[a-z-]*/i.exec(line.text)![0].toLowerCase();
  if (SOURCE_OPTIONS.has(option)) return;
  if (INCLUDE_OPTIONS.has(option)) out.warn(`line ${line.number}: ${option} includes another file, which is not read`);
  else if (EDITABLE_OPTIONS.has(option)) out.warn(`line ${line.number}: an editable requirement (${option}) is skipped`);
  else out.warn(`line ${line.number}: option ${option} is not understood and is skipped`);
}

function readRequirementLine(line: { number: number; text: string }, dev: boolean, out: Collector): void {
  const cut = TRAILING_OPTION.exec(line.text);
  const requirement = parseRequirement(cut ? line.text.slice(0, cut.index) : line.text);
  if (requirement === null) {
    const byLocation = LOCATION.test(line.text);
    out.warn(`line ${line.number}: ${byLocation ? 'a requirement by URL or path is skipped' : 'not a requirement, skipped'}`);
  } else if (requirement.url) {
    out.warn(`line ${line.number}: ${requirement.name} is required from a URL, skipped`);
  } else {
    const { name, exact, specifier } = requirement;
    out.add({ name, version: exact ?? null, ...(specifier !== undefined && { range: specifier }), dev });
  }
}

export function readRequirements(content: string, dev: boolean, out: Collector): void {
  for (const line of logicalLines(content)) {
    if (line.text.startsWith('-')) readOption(line, out);
    else readRequirementLine(line, dev, out);
  }
}

/**
 * Whether a file without a telling name reads as requirements: at least one requirement, and its first lines
 * nearly all options, requirements or locations.
 */
export function isRequirementsText(content: string): boolean {
  const head = content.length > 64 * 1024 ? content.slice(0, content.lastIndexOf('\n', 64 * 1024)) : content;
  const lines = logicalLines(head).slice(0, 50);
  const requirement = (text: string) => !text.startsWith('-') && parseRequirement(text.split(TRAILING_OPTION)[0]!) !== null;
  const fits = (text: string) => /^--?[a-z]/i.test(text) || LOCATION.test(text) || requirement(text);
  return lines.some((l) => requirement(l.text)) && lines.filter((l) => fits(l.text)).length >= 0.8 * lines.length;
}
