import { describe, expect, it } from 'vitest';
import { pageNameStems, stem, stems, stemsNamePage } from '../../../docindex/search/page-names.js';

/** Whether a query term names the page, as evidence.ts asks with the term's stems computed once per query. */
const termNamesPage = (term: string, names: readonly string[]) => stemsNamePage(stems(term), names);

describe('page names', () => {
  it('stems a query word and a file-name word alike', () => {
    expect(stem('tests')).toBe(stem('Testing'));
    expect(stem('logs')).toBe(stem('Logging'));
    expect(stem('benchmarks')).toBe(stem('benchmark'));
    expect(stem('validate')).toBe(stem('validation'));
    expect(stem('pool')).toBe('pool');
    expect(stem('cookie')).toBe(stem('Cookies'));
    expect(stem('query')).toBe(stem('queries'));
    expect(stem('class')).toBe(stem('classes'));
    expect(stem('process')).toBe(stem('processes'));
  });

  it("names a documentation page by its file's words, split and joined", () => {
    const names = pageNameStems('docs/docs/api/WebSocket.md');
    expect(termNamesPage('WebSocket', names)).toBe(true);
    expect(termNamesPage('websocket', names)).toBe(true);
    expect(termNamesPage('socket', names)).toBe(true);
    expect(termNamesPage('client', names)).toBe(false);
    expect(termNamesPage('tests', pageNameStems('docs/Guides/Testing.md'))).toBe(true);
    expect(termNamesPage('database', pageNameStems('docs/Guides/Database.md'))).toBe(true);
  });

  it("takes the folder's name for a generic file name, and leading underscores off", () => {
    expect(termNamesPage('routing', pageNameStems('docs/routing/index.md'))).toBe(true);
    expect(termNamesPage('faq', pageNameStems('guide/_faq.md'))).toBe(true);
    expect(pageNameStems('README.md')).toEqual([]);
  });

  it('does not name a page by a source file: its snippets already hold the names it defines', () => {
    expect(pageNameStems('lib/decorate.js')).toEqual([]);
    expect(pageNameStems('src/_faq.rs')).toEqual([]);
  });

  it('ignores short words and numbers', () => {
    expect(termNamesPage('v4', pageNameStems('docs/Migration-Guide-V4.md'))).toBe(false);
    expect(termNamesPage('migrate', pageNameStems('docs/Migration-Guide-V4.md'))).toBe(true);
  });
});
