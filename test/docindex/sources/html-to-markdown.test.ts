import { describe, expect, it } from 'vitest';
import { htmlToMarkdown } from '../../../docindex/sources/website/html-to-markdown.js';

const page = (body: string, head = '<title>Intro | Lib</title>') =>
  `<html><head>${head}</head><body><header class="top"><a href="/">Home</a><button>Search</button></header>
<nav><a href="/docs/a">A</a></nav><div class="sidebar"><a href="/docs/b">Sidebar link</a></div>${body}
<footer>Copyright Lib</footer><script>track()</script><style>.x{}</style></body></html>`;

describe('htmlToMarkdown', () => {
  it('keeps the main content with its headings and drops the navigation and boilerplate', () => {
    const md = htmlToMarkdown(
      page(`<main><nav class="breadcrumbs"><a href="/">Docs</a> / Intro</nav><article><h1>Intro<a class="hash-link" href="#intro">#</a></h1><p>Lib bakes bread.</p>
<div class="theme-doc-toc-mobile">On this page</div><h2>Setup</h2><p>Knead first.</p><h3>Details</h3><p>Then rest.</p>
<a class="edit-this-page" href="/edit">Edit this page</a><div role="navigation"><a href="/next">Next</a></div></article></main>`),
      'https://lib.dev/docs/intro',
    );
    expect(md.title).toBe('Intro');
    expect(md.markdown).toBe('# Intro\n\nLib bakes bread.\n\n## Setup\n\nKnead first.\n\n### Details\n\nThen rest.');
    // The links of the whole page stay available to a crawl, the menus' included.
    expect(md.links).toEqual(expect.arrayContaining(['https://lib.dev/docs/a', 'https://lib.dev/docs/b', 'https://lib.dev/next']));
  });

  it('keeps the language of code blocks however the page marks it', () => {
    const md = htmlToMarkdown(
      page(`<main><h1>Code</h1>
<pre><code class="language-ts">const a: number = 1;</code></pre>
<pre class="lang-python"><code>print("b")</code></pre>
<div class="highlight-source-rust"><pre><span class="k">fn</span> main() {}</pre></div>
<pre data-language="yaml"><code>c: 3</code></pre>
<pre><code>no language</code></pre>
<pre><code class="language-md">\`\`\`js\nnested\n\`\`\`</code></pre></main>`),
      'https://lib.dev/docs/code',
    ).markdown;
    expect(md).toContain('```ts\nconst a: number = 1;\n```');
    expect(md).toContain('```python\nprint("b")\n```');
    expect(md).toContain('```rust\nfn main() {}\n```');
    expect(md).toContain('```yaml\nc: 3\n```');
    expect(md).toContain('```\nno language\n```');
    // A fence inside the code is not closed by the block's own fence.
    expect(md).toContain('````md\n```js\nnested\n```\n````');
  });

  it('keeps tables and strikethrough (GFM) and makes links absolute', () => {
    const md = htmlToMarkdown(
      page(`<article><h1>API</h1><table><thead><tr><th>Option</th><th>Default</th></tr></thead><tbody><tr><td>flour</td><td>500</td></tr></tbody></table>
<p><del>old</del> see <a href="../guide/setup.html">setup</a> and <img src="img/a.png" alt="diagram"></p></article>`),
      'https://lib.dev/docs/api/index.html',
    ).markdown;
    expect(md).toContain('| Option | Default |\n| --- | --- |\n| flour | 500 |');
    expect(md).toContain('~~old~~');
    expect(md).toContain('[setup](https://lib.dev/docs/guide/setup.html)');
    expect(md).toContain('![diagram](https://lib.dev/docs/api/img/a.png)');
  });

  it('drops the boilerplate tags and roles everywhere', () => {
    const md = htmlToMarkdown(page('<main><h1>T</h1><p>Body text.</p><form><input></form><aside>Ad</aside><noscript>Enable JS</noscript><div role="contentinfo">Legal</div><svg><text>icon</text></svg></main>'), 'https://lib.dev/').markdown;
    expect(md).toBe('# T\n\nBody text.');
  });

  it('keeps headings and sections whose anchor is a boilerplate word, and still drops boilerplate by its id', () => {
    // Anchors are made from the heading's text (Docusaurus and MkDocs on the heading, Sphinx on its section).
    const md = htmlToMarkdown(
      page(`<main><h1 id="guide">Guide</h1><h2 id="guides-table-of-contents">Guides table of contents</h2><p>In alphabetical order.</p>
<section id="pagination"><h2>Pagination</h2><p>Pass the cursor.</p></section>
<div class="section" id="sidebar"><h2>Sidebar widget</h2><p>It folds.</p></div>
<div id="toc"><a href="#pagination">Pagination</a></div><div id="sidebar-menu">Menu</div></main>`),
      'https://lib.dev/docs/guide',
    ).markdown;
    expect(md).toBe('# Guide\n\n## Guides table of contents\n\nIn alphabetical order.\n\n## Pagination\n\nPass the cursor.\n\n## Sidebar widget\n\nIt folds.');
  });

  it('takes the title from <title> when the page has no <h1>, and from the URL when it has neither', () => {
    expect(htmlToMarkdown(page('<main><p>Text.</p></main>'), 'https://lib.dev/x').title).toBe('Intro | Lib');
    expect(htmlToMarkdown(page('<main><p>Text.</p></main>', ''), 'https://lib.dev/docs/rest-api.html').title).toBe('rest api');
  });

  it('reads the whole body when the page marks no main content, boilerplate still dropped', () => {
    const md = htmlToMarkdown(page('<div class="content"><h1>Plain</h1><p>Only text.</p></div>'), 'https://lib.dev/').markdown;
    expect(md).toBe('# Plain\n\nOnly text.');
  });

  it('refuses a page nested deep enough to stall the converters, at once', () => {
    const deep = `<main>${'<div>'.repeat(100_000)}x${'</div>'.repeat(100_000)}</main>`;
    const started = Date.now();
    expect(() => htmlToMarkdown(deep, 'https://lib.dev/')).toThrow(/nest deeper than 512/);
    expect(Date.now() - started).toBeLessThan(2000);
    // Unclosed paragraphs and list items, as pages often leave them, are not nesting.
    expect(htmlToMarkdown(`<main><h1>List</h1><ul>${'<li>item'.repeat(3000)}</ul></main>`, 'https://lib.dev/').markdown).toContain('-   item');
  });
});
