import { describe, expect, it } from 'vitest';
import { countTokens, parseFile } from '../../../docindex/parse/parse.js';
import { TABLE_RUN_TOKENS } from '../../../docindex/parse/tables.js';
import { byTitle, fixture, rows } from './helpers.js';

describe('Markdown: sections, breadcrumbs and code blocks (getting-started.md)', () => {
  const snippets = parseFile('docs/getting-started.md', fixture('getting-started.md'));

  it('produces info snippets per section and code snippets per fence, in file order', () => {
    expect(rows(snippets)).toEqual([
      { type: 'info', title: 'Getting Started', breadcrumb: 'Getting Started', language: null },
      // `npm install millstone` and `npm run build` are too small to stand alone: they stay in their sections' text.
      { type: 'info', title: 'Installation', breadcrumb: 'Getting Started > Installation', language: null },
      { type: 'info', title: 'From source', breadcrumb: 'Getting Started > Installation > From source', language: null },
      { type: 'code', title: 'Clone the repository and install the dependencies', breadcrumb: 'Getting Started > Installation > From source', language: 'bash' },
      { type: 'info', title: 'Configuration', breadcrumb: 'Getting Started > Configuration', language: null },
      { type: 'code', title: 'Create a queue with a connection string', breadcrumb: 'Getting Started > Configuration', language: 'ts' },
      { type: 'code', title: 'Configuration', breadcrumb: 'Getting Started > Configuration', language: 'python' },
      { type: 'info', title: 'Retries', breadcrumb: 'Getting Started > Retries', language: null },
    ]);
    expect(snippets.map((s) => s.ordinal)).toEqual(snippets.map((_, i) => i));
  });

  it('counts tokens of the final content with the real tokenizer', () => {
    for (const s of snippets) expect(s.tokenCount).toBe(countTokens(s.content));
    expect(byTitle(snippets, 'Create a queue with a connection string').tokenCount).toBeGreaterThan(1);
  });

  it('does not index the front matter, and uses its title as the top breadcrumb', () => {
    expect(snippets.some((s) => s.content.includes('sidebar_position'))).toBe(false);
    expect(snippets[0]!.content).toBe('Millstone is a small task queue for Node.js. It stores jobs in PostgreSQL and runs them with retries and timeouts.');
  });

  it('drops badge lines and HTML comments from the text', () => {
    const all = snippets.map((s) => s.content).join('\n');
    expect(all).not.toContain('img.shields.io');
    expect(all).not.toContain('TODO: add a screenshot');
  });

  it('keeps code out of the section text, but for blocks too small to stand alone, and keeps lists, tables and indented code', () => {
    expect(byTitle(snippets, 'Installation').content).toBe(
      'Millstone needs Node.js 20 or later and a PostgreSQL 14+ database.\n\nInstall the package with npm:\n\n```bash\nnpm install millstone\n```',
    );
    expect(byTitle(snippets, 'From source').content).toBe('1. Clone the repository and install the dependencies:\n\n2. Build the TypeScript sources:\n\n```sh\nnpm run build\n```');
    const config = byTitle(snippets, 'Configuration');
    expect(config.type).toBe('info');
    expect(config.content).toContain('| `concurrency` | `4` | Jobs run in parallel per worker |');
    expect(config.content).not.toContain('new Queue');
    expect(byTitle(snippets, 'Retries').content).toContain("    queue.define('email', handler, { maxAttempts: 5 })");
  });

  it('strips the list indentation from fences nested in list items', () => {
    const clone = byTitle(snippets, 'Clone the repository and install the dependencies');
    expect(clone.content).toBe('git clone https://github.com/acme/millstone.git\ncd millstone && npm ci');
  });

  it('does not treat "#" lines inside fences as headings', () => {
    const ts = snippets.find((s) => s.language === 'ts')!;
    expect(ts.content).toContain('// # this is a comment, not a heading');
    expect(snippets.some((s) => s.breadcrumb?.includes('this is a comment'))).toBe(false);
  });

  it('skips headings with no text under them', () => {
    expect(snippets.some((s) => s.breadcrumb?.includes('FAQ'))).toBe(false);
  });
});

describe('Markdown headings', () => {
  it('builds the heading path across levels and pops siblings', () => {
    const md = [
      '# Guide',
      'Intro paragraph that is long enough to be kept as a snippet.',
      '## Install',
      'How to install the package on every supported platform.',
      '### npm',
      'The npm registry hosts every release of the package since 1.0.',
      '## Usage',
      'Call the main function with your options object to get started.',
      '#### Deep',
      'A heading that skips levels still nests under the last shallower one.',
      '# Reference',
      'The reference section restarts the path from the top level heading.',
    ].join('\n\n');
    expect(parseFile('README.md', md).map((s) => s.breadcrumb)).toEqual([
      'Guide',
      'Guide > Install',
      'Guide > Install > npm',
      'Guide > Usage',
      'Guide > Usage > Deep',
      'Reference',
    ]);
  });

  it('supports setext headings, but a --- after a blank line is a thematic break', () => {
    const md = [
      'Title',
      '=====',
      '',
      'Paragraph under the setext title with enough words in it.',
      '',
      '---',
      '',
      'Still under the title, because the rule above follows a blank line.',
      '',
      'Sub Title',
      '---------',
      'Text under the level-two setext heading with enough characters.',
    ].join('\n');
    const s = parseFile('a.md', md);
    expect(rows(s).map((r) => r.breadcrumb)).toEqual(['Title', 'Title > Sub Title']);
    expect(s[0]!.content).toContain('---');
    expect(s[0]!.content).toContain('Still under the title');
  });

  it('cleans inline markup, closing hashes and ids from headings', () => {
    const md = '## The `useQueue()` hook and [links](https://x.dev) ##\n\nText long enough to be kept as an info snippet here.\n\n### **Bold** heading {#custom-id}\n\nMore text long enough to be kept as an info snippet here.';
    expect(parseFile('a.md', md).map((s) => s.breadcrumb)).toEqual(['The useQueue() hook and links', 'The useQueue() hook and links > Bold heading']);
  });

  it('recognises single-line HTML headings (README banners)', () => {
    const md = '<h1 align="center">Millstone</h1>\n\nA task queue for Node.js that stores its jobs in PostgreSQL tables.';
    expect(rows(parseFile('README.md', md))).toEqual([{ type: 'info', title: 'Millstone', breadcrumb: 'Millstone', language: null }]);
  });

  it('does not repeat a front matter title that the first heading repeats', () => {
    const md = '---\ntitle: Queues\n---\n# Queues\n\nQueues hold jobs until a worker picks them up for execution.\n\n## Priorities\n\nHigher priority jobs are picked first by every worker in the pool.';
    expect(parseFile('a.md', md).map((s) => s.breadcrumb)).toEqual(['Queues', 'Queues > Priorities']);
  });

  it('treats an unclosed front matter as text', () => {
    const md = '---\nnot front matter after all, since it is never closed by a second rule line';
    expect(parseFile('a.md', md)[0]!.content).toContain('not front matter after all');
  });

  it('gives the text before the first heading a null title and breadcrumb without front matter', () => {
    const md = 'Some introduction text before any heading appears in the file.\n\n# First\n\nBody of the first section, long enough to be indexed.';
    expect(rows(parseFile('a.md', md))).toEqual([
      { type: 'info', title: null, breadcrumb: null, language: null },
      { type: 'info', title: 'First', breadcrumb: 'First', language: null },
    ]);
  });
});

describe('Markdown fences', () => {
  it('normalises fence languages', () => {
    const block = (info: string) => `\`\`\`${info}\nconst value = computeSomething(42);\nconsole.log(value);\n\`\`\``;
    const infos = ['typescript', 'TypeScript', '{python}', 'js{1,3}', 'language-js', 'shell', 'console', 'jsx:title=src/App.jsx', 'py', 'golang', 'yml', 'c++', 'ts twoslash', ''];
    const md = infos.map((i) => `Example:\n\n${block(i)}`).join('\n\n');
    const code = parseFile('a.md', md).filter((s) => s.type === 'code');
    expect(code.map((s) => s.language)).toEqual(['ts', 'ts', 'python', 'js', 'js', 'bash', 'bash', 'jsx', 'python', 'go', 'yaml', 'cpp', 'ts', null]);
  });

  it('takes the title from the sentence before, the title attribute, or the heading', () => {
    const md = [
      '## Setup',
      'First create a client. The client keeps one connection pool per process:',
      '```js\nconst client = createClient({ url: process.env.URL });\n```',
      '```js title="worker.js"\nconst worker = new Worker(client, { name: "mailer" });\n```',
      '```js\nawait worker.start({ concurrency: 4, pollInterval: 500 });\n```',
      'For example:',
      '```js\nawait client.enqueue("email", { to: "ada@example.com" });\n```',
    ].join('\n\n');
    expect(parseFile('a.md', md).map((s) => s.title)).toEqual([
      'Setup', // the info snippet of the section
      'The client keeps one connection pool per process',
      'worker.js',
      'Setup', // another block intervened: the heading
      'Setup', // "For example:" says nothing: the heading
    ]);
  });

  it('uses the first sentence when the paragraph before does not end with a colon', () => {
    const md = 'Workers poll the table. Each poll locks one row with SKIP LOCKED so that workers never collide.\n\n```sql\nselect * from jobs for update skip locked limit 1;\n```';
    expect(parseFile('a.md', md)[1]!.title).toBe('Workers poll the table');
  });

  it('handles ~~~ fences, longer fences containing ``` and fences without a language', () => {
    const md = '~~~\nplain block without any language at all\n~~~\n\n````md\nHere is a nested fence:\n```js\nconsole.log(1)\n```\n````';
    const s = parseFile('a.md', md);
    expect(s.map((x) => [x.type, x.language])).toEqual([
      ['code', null],
      ['code', 'markdown'],
    ]);
    expect(s[1]!.content).toBe('Here is a nested fence:\n```js\nconsole.log(1)\n```');
  });

  it('runs an unclosed fence to the end of the file, and its "#" lines are not headings', () => {
    const md = '# Doc\n\nIntro text for the document, long enough to be kept.\n\n```bash\n# install\nnpm install millstone --save-exact\n# Not a heading';
    const s = parseFile('a.md', md);
    expect(rows(s)).toEqual([
      { type: 'info', title: 'Doc', breadcrumb: 'Doc', language: null },
      { type: 'code', title: 'Intro text for the document, long enough to be kept', breadcrumb: 'Doc', language: 'bash' },
    ]);
    expect(s[1]!.content).toBe('# install\nnpm install millstone --save-exact\n# Not a heading');
  });

  it('keeps code blocks too small to stand alone in their section, unless even together they are too small', () => {
    const md = '## Install\n\nInstall the package, then import it where you need it:\n\n```bash\nnpm i zod\n```\n\nThat is all.';
    expect(parseFile('a.md', md).map((s) => [s.type, s.content])).toEqual([
      ['info', 'Install the package, then import it where you need it:\n\n```bash\nnpm i zod\n```\n\nThat is all.'],
    ]);
    // Too little text to take them in: tiny blocks are skipped, short shell commands kept as before.
    const bare = 'Close it:\n\n```js\n}\n```\n\nInstall:\n\n```bash\nnpm i zod\n```\n\nOr:\n\n```js\nx = 1\n```';
    expect(parseFile('a.md', bare).map((s) => s.content)).toEqual(['npm i zod']);
  });

  it('folds blocks that differ only by package manager into one snippet with the variants', () => {
    const md = [
      '## Install',
      'Add the package to your project with the package manager you use:',
      '```bash\nnpm install --save millstone pg\n```',
      '```bash\nyarn add millstone pg\n```',
      '```sh\n$ pnpm add millstone pg\n```',
      '```bash\nnpm install millstone pg --save-exact --no-audit --no-fund\n```', // npm again: a separate block
      'Then run the setup:',
      '```bash\nbunx millstone init --database postgres://localhost/app\n```',
      '```bash\nnpx millstone init --database postgres://localhost/other\n```', // not the same command
    ].join('\n\n');
    const code = parseFile('a.md', md).filter((s) => s.type === 'code');
    expect(code.map((s) => s.content)).toEqual([
      'npm install --save millstone pg\n# or, with yarn:\nyarn add millstone pg\n# or, with pnpm:\n$ pnpm add millstone pg',
      'npm install millstone pg --save-exact --no-audit --no-fund',
      'bunx millstone init --database postgres://localhost/app',
      'npx millstone init --database postgres://localhost/other',
    ]);
    expect(code[0]!.title).toBe('Add the package to your project with the package manager you use');
    // Text between two blocks keeps them apart.
    const apart = '## Install\n\n```bash\nnpm install millstone pg pg-cursor pg-query-stream\n```\n\nWith Yarn instead, which some teams prefer:\n\n```bash\nyarn add millstone pg pg-cursor pg-query-stream\n```';
    expect(parseFile('a.md', apart).filter((s) => s.type === 'code')).toHaveLength(2);
    // Opposite commands are not variants of one: installing and removing the same package stay two blocks.
    const opposite = '## Packages\n\nAdd it, or take it away again:\n\n```bash\nnpm install millstone-extra-plugins-for-postgres\n```\n\n```bash\nyarn remove millstone-extra-plugins-for-postgres\n```';
    expect(parseFile('a.md', opposite).filter((s) => s.type === 'code')).toHaveLength(2);
  });

  it('carries a section too small to stand alone into the subsection that follows it', () => {
    const md = '## Hooks\n\nHooks run in order.\n\n### onRequest\n\nThe first hook of the request lifecycle, called before parsing.\n\n## Small\n\nTiny.\n\n## Next\n\nA sibling section does not take in the text of the one before it.';
    const s = parseFile('a.md', md);
    expect(s.map((x) => [x.breadcrumb, x.content])).toEqual([
      ['Hooks > onRequest', 'Hooks run in order.\n\nThe first hook of the request lifecycle, called before parsing.'],
      ['Next', 'A sibling section does not take in the text of the one before it.'],
    ]);
  });
});

describe('MDX', () => {
  const snippets = parseFile('docs/install.mdx', fixture('tabs.mdx'));

  it('drops imports, exports, comments and JSX-only lines, keeping prose inside components', () => {
    const info = snippets.filter((s) => s.type === 'info');
    expect(info.map((s) => s.content)).toEqual([
      'Pick your package manager. Every manager installs the same package from the npm registry.\n\nMillstone requires a PostgreSQL database that supports `SKIP LOCKED` (version 9.5 and later).',
      'Run the doctor command; it checks the database connection and prints the server version:',
    ]);
    const all = snippets.map((s) => s.content).join('\n');
    for (const gone of ['import', 'export', 'section:', '<Tabs', 'TabItem', 'label="Yarn"', 'This comment', '<Callout']) expect(all).not.toContain(gone);
  });

  it('finds fences indented inside JSX components (package-manager tabs folded into one)', () => {
    expect(snippets.filter((s) => s.type === 'code').map((s) => [s.content, s.language])).toEqual([
      ['npm install millstone\n# or, with yarn:\nyarn add millstone', 'bash'],
      ['npx millstone doctor --database-url postgres://localhost/app', 'bash'],
    ]);
  });

  it('uses the front matter title as the root of the breadcrumbs', () => {
    expect(snippets.map((s) => s.breadcrumb)).toContain('Installation > Installing Millstone > Verify the installation');
  });

  it('applies the MDX rules only to .mdx files', () => {
    const text = "import { Queue } from 'millstone';\n\n<Note>Plain Markdown keeps HTML-like lines and imports as text.</Note>";
    expect(parseFile('a.md', text)[0]!.content).toBe(text);
    expect(parseFile('a.mdx', text)[0]!.content).toBe('<Note>Plain Markdown keeps HTML-like lines and imports as text.</Note>');
  });
});

describe('Markdown lines that show no text', () => {
  it('drops tag-only lines, sponsor logos, badges and link definitions, but keeps links and autolinks', () => {
    const md = [
      '## Sponsors',
      '<p align="center">',
      '<a href="https://opencollective.com/x/0/website"><img src="https://opencollective.com/x/0/avatar.svg"></a>',
      '[<img src="https://x.dev/img/acme.svg" width="45%" alt="Acme">](https://acme.dev)<img src="gap.svg">',
      '[![Backers][backers-image]](#backers) ![build](https://ci.dev/badge.svg)',
      '</p>',
      '',
      'Thanks to everyone who supports the project with a monthly donation.',
      'Read the [sponsorship guide](https://x.dev/sponsor) or write to <https://x.dev/contact>.',
      '',
      '[backers-image]: https://opencollective.com/x/backers/badge.svg',
    ].join('\n');
    expect(parseFile('README.md', md)[0]!.content).toBe(
      'Thanks to everyone who supports the project with a monthly donation.\nRead the [sponsorship guide](https://x.dev/sponsor) or write to <https://x.dev/contact>.',
    );
  });
});

describe('Markdown edge cases', () => {
  it('gives identical output for CRLF, CR and BOM-prefixed input', () => {
    const md = fixture('getting-started.md');
    const lf = parseFile('a.md', md);
    expect(parseFile('a.md', `\uFEFF${md.replace(/\n/g, '\r\n')}`)).toEqual(lf);
    expect(parseFile('a.md', md.replace(/\n/g, '\r'))).toEqual(lf);
  });

  it('skips whitespace-only files and tiny sections', () => {
    expect(parseFile('a.md', '')).toEqual([]);
    expect(parseFile('a.md', ' \n\t\n  \r\n')).toEqual([]);
    expect(parseFile('a.md', '# Title\n\nToo short.')).toEqual([]);
  });

  it('honours minChars', () => {
    expect(parseFile('a.md', '# T\n\nShort text.', { minChars: 5 })).toHaveLength(1);
    expect(parseFile('a.md', '# T\n\nThis sentence has well over forty visible characters.', { minChars: 200 })).toEqual([]);
  });

  it('keeps tabs and unicode intact', () => {
    const md = '# Überblick\n\nDie Warteschlange speichert Aufträge in PostgreSQL — schnell und zuverlässig. 日本語のテキストも大丈夫です。\n\n```go\nfunc main() {\n\tfmt.Println("héllo, Wärme, 日本語")\n}\n```';
    const s = parseFile('a.md', md);
    expect(s[0]!.breadcrumb).toBe('Überblick');
    expect(s[1]!.content).toBe('func main() {\n\tfmt.Println("héllo, Wärme, 日本語")\n}');
  });
});

describe('Markdown tables', () => {
  const header = '| Error | Code | Description |\n| --- | --- | --- |';
  const row = (k: number) => `| \`Error${k}\` | \`ERR_${k}\` | the socket is destroyed because timer number ${k} ran out of patience. |`;
  const table = (n: number) => [header, ...Array.from({ length: n }, (_, k) => row(k))].join('\n');
  const intro = 'Every error the client throws is listed here, with the code it carries in `err.code`.';
  const outro = 'Check `err.code` rather than the class: two copies of the library have two classes.';

  it('keeps a small table in its section, with the prose around it', () => {
    const s = parseFile('a.md', `# Errors\n\n${intro}\n\n${table(3)}\n\n${outro}`);
    expect(s).toHaveLength(1);
    expect(s[0]!.content).toBe(`${intro}\n\n${table(3)}\n\n${outro}`);
  });

  it('cuts a large table out of its section into runs of whole rows, each under the header', () => {
    const s = parseFile('a.md', `# Reference\n\n## Errors\n\n${intro}\n\n${table(40)}\n\n${outro}\n\n## Next\n\nThe next section is about retries and how long each one waits.`);
    expect(s[0]).toMatchObject({ title: 'Errors', breadcrumb: 'Reference > Errors', content: `${intro}\n\n${outro}` });
    const runs = s.slice(1, -1);
    expect(runs.length).toBeGreaterThan(3);
    for (const r of runs) {
      expect(r).toMatchObject({ type: 'info', title: 'Errors', breadcrumb: 'Reference > Errors' });
      expect(r.content.startsWith(`${header}\n| \``)).toBe(true);
      expect(r.tokenCount).toBeLessThanOrEqual(TABLE_RUN_TOKENS);
    }
    // Every row once, in order, none cut.
    const bodies = runs.flatMap((r) => r.content.split('\n').slice(2));
    expect(bodies).toEqual(Array.from({ length: 40 }, (_, k) => row(k)));
    expect(s[s.length - 1]!.title).toBe('Next');
  });

  it('gives a row too long for any run a run of its own', () => {
    const long = `| \`Huge\` | \`ERR_HUGE\` | ${'a very long description '.repeat(60)}|`;
    const md = `# Errors\n\n${[header, row(1), long, row(2), ...Array.from({ length: 20 }, (_, k) => row(k + 3))].join('\n')}`;
    const runs = parseFile('a.md', md);
    expect(runs.map((r) => r.content.split('\n').length - 2).slice(0, 3)).toEqual([1, 1, expect.any(Number)]);
    expect(runs[1]!.content).toBe(`${header}\n${long}`);
  });

  it('leaves alone what is not a table: a delimiter row of another width, and tables in code blocks', () => {
    const rowsOnly = Array.from({ length: 40 }, (_, k) => row(k)).join('\n');
    const uneven = `# Errors\n\n| Error | Code | Description |\n| --- | --- |\n${rowsOnly}`;
    expect(parseFile('a.md', uneven)).toHaveLength(1);
    const fenced = parseFile('a.md', `# Errors\n\n${intro}\n\n\`\`\`md\n${table(40)}\n\`\`\``);
    expect(fenced.map((s) => s.type)).toEqual(['info', 'code']);
    expect(fenced[1]!.content).toBe(table(40));
  });
});
