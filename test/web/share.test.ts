import { describe, expect, it } from 'vitest';
import { extractSharedUrl } from '../../web/src/share.js';

describe("the share target's link extraction", () => {
  it('takes `url` when the sharing app sets it', () => {
    expect(extractSharedUrl({ url: 'https://www.instagram.com/p/Cx1AbC/', text: 'Look at this', title: 'Pasta' })).toBe('https://www.instagram.com/p/Cx1AbC/');
  });

  it('finds the link inside `text`, after a caption, as Instagram and TikTok share it', () => {
    expect(extractSharedUrl({ text: 'Best lemon pasta ever!! https://www.tiktok.com/@chef/video/7301234567890?is_from_webapp=1 #pasta' })).toBe(
      'https://www.tiktok.com/@chef/video/7301234567890?is_from_webapp=1',
    );
    expect(extractSharedUrl({ url: '', text: 'Check out this post (https://www.instagram.com/reel/Cz9xYz/).' })).toBe('https://www.instagram.com/reel/Cz9xYz/');
  });

  it('keeps parentheses that belong to the link, drops the sentence around it', () => {
    expect(extractSharedUrl({ text: 'See https://en.wikipedia.org/wiki/Carbonara_(pasta), it is good!' })).toBe('https://en.wikipedia.org/wiki/Carbonara_(pasta)');
    expect(extractSharedUrl({ text: '"https://example.com/recipe?id=1".' })).toBe('https://example.com/recipe?id=1');
  });

  it('takes the first link, `url` before `text` before `title`', () => {
    expect(extractSharedUrl({ text: 'https://a.example/1 and https://b.example/2' })).toBe('https://a.example/1');
    expect(extractSharedUrl({ url: 'not a link', text: 'nothing', title: 'http://c.example/3' })).toBe('http://c.example/3');
  });

  it('finds nothing when nothing is an http(s) link', () => {
    expect(extractSharedUrl({})).toBeUndefined();
    expect(extractSharedUrl({ url: null, text: 'just words, ftp://files.example/x and javascript:alert(1)', title: null })).toBeUndefined();
  });
});
