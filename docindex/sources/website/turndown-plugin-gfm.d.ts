// The plugin ships no types: the one export used (docindex/sources/website/html-to-markdown.ts).
declare module '@joplin/turndown-plugin-gfm' {
  import type TurndownService from 'turndown';

  export const gfm: TurndownService.Plugin;
}
