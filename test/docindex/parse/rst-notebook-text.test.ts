import { describe, expect, it } from 'vitest';
import { parseFile } from '../../../docindex/parse/parse.js';
import { byTitle, fixture, prose, rows } from './helpers.js';

describe('reStructuredText (guide.rst)', () => {
  const snippets = parseFile('docs/guide.rst', fixture('guide.rst'));

  it('splits at over- and underlined titles with levels in order of appearance', () => {
    expect(rows(snippets)).toEqual([
      { type: 'info', title: 'Millstone', breadcrumb: 'Millstone', language: null },
      { type: 'info', title: 'Installation', breadcrumb: 'Millstone > Installation', language: null },
      { type: 'code', title: 'Install the client from PyPI with pip', breadcrumb: 'Millstone > Installation', language: 'bash' },
      { type: 'info', title: 'Defining jobs', breadcrumb: 'Millstone > Usage > Defining jobs', language: null },
      { type: 'code', title: 'Register a job handler', breadcrumb: 'Millstone > Usage > Defining jobs', language: 'python' },
      { type: 'code', title: 'Enqueue a job from anywhere in your application', breadcrumb: 'Millstone > Usage > Defining jobs', language: null },
      { type: 'code', title: 'Interactive example', breadcrumb: 'Millstone > Usage > Defining jobs', language: 'python' },
      { type: 'info', title: 'Retries', breadcrumb: 'Millstone > Advanced topics > Retries', language: null },
      { type: 'code', title: 'The retry policy can also be set per queue', breadcrumb: 'Millstone > Advanced topics > Retries', language: 'python' },
    ]);
  });

  it('reads code-block options (caption) and dedents the body', () => {
    expect(byTitle(snippets, 'Register a job handler').content).toBe(
      'from millstone import Queue\n\nqueue = Queue("postgres://localhost/app")\n\n@queue.job("send-email")\ndef send_email(to, subject):\n    mailer.send(to, subject)',
    );
  });

  it('turns "::" paragraphs into a colon in the text and the indented block into code', () => {
    const info = byTitle(snippets, 'Defining jobs');
    expect(info.content).toContain('Enqueue a job from anywhere in your application:\n');
    expect(info.content).not.toContain('application::');
    expect(byTitle(snippets, 'Enqueue a job from anywhere in your application').content).toBe('queue.enqueue("send-email", to="ada@example.com", subject="Hi")');
  });

  it('uses the language of a preceding highlight directive for literal blocks', () => {
    expect(byTitle(snippets, 'The retry policy can also be set per queue').language).toBe('python');
  });

  it('keeps doctest blocks as python code', () => {
    expect(byTitle(snippets, 'Interactive example').content).toBe('>>> queue.enqueue("resize-image", path="cat.png")\n\'job-1\'\n>>> queue.size()\n1');
  });

  it('drops comments, targets, contents and toctree, and keeps admonitions as text', () => {
    const all = snippets.map((s) => s.content).join('\n');
    for (const gone of ['This is a comment', '_installation', 'Table of Contents', 'toctree', 'scheduling']) expect(all).not.toContain(gone);
    expect(byTitle(snippets, 'Defining jobs').content).toContain('.. note::\n\n   Jobs are executed at least once');
  });

  it('handles every adornment character and short titles', () => {
    const rst = ['Top', '~~~', '', prose(12, 1), '', 'Mid', '^^^', '', prose(12, 2), '', 'Low', '"""', '', prose(12, 3), '', 'Mid two', '^^^^^^^', '', prose(12, 4)].join('\n');
    expect(parseFile('a.rst', rst).map((s) => s.breadcrumb)).toEqual(['Top', 'Top > Mid', 'Top > Mid > Low', 'Top > Mid two']);
  });

  it('does not take transitions or simple-table borders for titles', () => {
    const rst = `Title\n=====\n\n${prose(15, 5)}\n\n----------\n\n=====  =====\nName   Value\n=====  =====\nalpha  1\n=====  =====\n`;
    const s = parseFile('a.rst', rst);
    expect(s.map((x) => x.breadcrumb)).toEqual(['Title']);
    expect(s[0]!.content).toContain('Name   Value');
  });
});

describe('Jupyter notebooks (quickstart.ipynb)', () => {
  const snippets = parseFile('examples/quickstart.ipynb', fixture('quickstart.ipynb'));

  it('parses markdown cells as Markdown with breadcrumbs across cells, code cells in the kernel language', () => {
    expect(rows(snippets)).toEqual([
      { type: 'info', title: 'Millstone quickstart', breadcrumb: 'Millstone quickstart', language: null },
      { type: 'info', title: 'Connect to the database', breadcrumb: 'Millstone quickstart > Connect to the database', language: null },
      { type: 'code', title: 'Create a queue object pointing at the local database', breadcrumb: 'Millstone quickstart > Connect to the database', language: 'python' },
      { type: 'code', title: 'Connect to the database', breadcrumb: 'Millstone quickstart > Connect to the database', language: 'python' },
      { type: 'code', title: 'Inspect results', breadcrumb: 'Millstone quickstart > Inspect results', language: 'python' },
      { type: 'code', title: 'Inspect results', breadcrumb: 'Millstone quickstart > Inspect results', language: 'python' },
    ]);
  });

  it('joins source arrays, ignores outputs and raw cells', () => {
    expect(snippets[2]!.content).toBe('from millstone import Queue\nqueue = Queue("postgres://localhost/app")\nprint(queue.server_version())');
    const all = snippets.map((s) => s.content).join('\n');
    expect(all).not.toContain('connected to postgres');
    expect(all).not.toContain('iVBORw0KGgo');
    expect(all).not.toContain('raw cell content');
  });

  it('closes a fence left open by a markdown cell at the next cell, and code cells cannot close their own fence early', () => {
    expect(snippets[4]!.content).toBe('# an example left open in a markdown cell');
    expect(snippets[5]!.content).toBe("for job in queue.completed(limit=10):\n    print(job.id, job.status)\n# a line with a fence in a string: '```'");
  });

  it('takes the language from kernelspec or language_info, defaulting to python', () => {
    const nb = (metadata: object) =>
      JSON.stringify({ metadata, nbformat: 4, cells: [{ cell_type: 'code', source: ['x <- c(1, 2, 3)\n', 'summary(lm(y ~ x))'], outputs: [] }] });
    expect(parseFile('a.ipynb', nb({ kernelspec: { language: 'R' } }))[0]!.language).toBe('r');
    expect(parseFile('a.ipynb', nb({ language_info: { name: 'julia' } }))[0]!.language).toBe('julia');
    expect(parseFile('a.ipynb', nb({}))[0]!.language).toBe('python');
  });

  it('reads nbformat 3 worksheets', () => {
    const nb = { nbformat: 3, metadata: {}, worksheets: [{ cells: [{ cell_type: 'heading', level: 2, source: 'Old format' }, { cell_type: 'code', input: 'print("hello from an nbformat 3 notebook")', outputs: [] }] }] };
    expect(rows(parseFile('a.ipynb', JSON.stringify(nb)))).toEqual([{ type: 'code', title: 'Old format', breadcrumb: 'Old format', language: 'python' }]);
  });

  it('returns no snippets for invalid JSON or JSON that is not a notebook', () => {
    expect(parseFile('a.ipynb', '{"cells": [')).toEqual([]);
    expect(parseFile('a.ipynb', 'not json at all')).toEqual([]);
    expect(parseFile('a.ipynb', '[1, 2, 3]')).toEqual([]);
    expect(parseFile('a.ipynb', '{"cells": [null, 5, {"cell_type": "code", "source": 42}]}')).toEqual([]);
  });
});

describe('plain text', () => {
  it('indexes a small file as one info snippet titled by the file name', () => {
    const s = parseFile('docs/notes.txt', fixture('notes.txt'));
    expect(rows(s)).toEqual([{ type: 'info', title: 'notes.txt', breadcrumb: 'docs/notes.txt', language: null }]);
    expect(s[0]!.content).toBe(fixture('notes.txt').trim());
  });

  it('groups paragraphs into windows under the cap, cutting between paragraphs', () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i}. ${prose(40, i + 10)} end.`);
    const s = parseFile('a.txt', paragraphs.join('\n\n'), { maxTokens: 200, overlapTokens: 0 });
    expect(s.length).toBeGreaterThan(4);
    for (const w of s) {
      expect(w.tokenCount).toBeLessThanOrEqual(200);
      expect(w.content).toMatch(/^Paragraph \d+\./); // starts at a paragraph
      expect(w.content).toMatch(/\.$/); // ends at one
    }
    expect(s.map((w) => w.content).join('\n\n')).toBe(paragraphs.join('\n\n'));
    expect(s.map((w) => w.title)).toEqual(s.map((_, i) => `a.txt (part ${i + 1}/${s.length})`));
  });
});
