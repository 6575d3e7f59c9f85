/** Drops sentence punctuation after a link; a closing parenthesis only when the link did not open one. */
function trimPunctuation(link: string): string {
  let s = link;
  for (;;) {
    const last = s.at(-1) ?? '';
    const unbalanced = last === ')' && s.split('(').length < s.split(')').length;
    if (!(/[.,;:!?\]}'"]/.test(last) || unbalanced)) return s;
    s = s.slice(0, -1);
  }
}

/**
 * What a phone shares into the app (the manifest's share target sends `title`, `text` and `url` as query
 * parameters): the post's link. Apps disagree on where they put it: Instagram and TikTok send it in `text`, often
 * after a caption; others use `url`. The first http(s) link wins, `url` first; trailing punctuation is not part of it.
 */
export function extractSharedUrl(params: { url?: string | null; text?: string | null; title?: string | null }): string | undefined {
  for (const field of [params.url, params.text, params.title]) {
    for (const candidate of (field ?? '').match(/https?:\/\/[^\s<>"']+/gi) ?? []) {
      const trimmed = trimPunctuation(candidate);
      try {
        const url = new URL(trimmed);
        if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString();
      } catch {
        // not a URL after all: try the next one
      }
    }
  }
  return undefined;
}
