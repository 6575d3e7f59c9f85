import http from 'node:http';

/**
 * Media for tests, made in the test: WAV files (PCM header + samples) and a tiny "video site" on 127.0.0.1 whose
 * pages yt-dlp's generic extractor reads (an HTML5 <video> with a <source> and a captions <track>).
 */
export interface WavOptions {
  seconds?: number;
  sampleRate?: number;
  /** Tone frequency (Hz) and amplitude (0..1) during "speech". */
  frequency?: number;
  amplitude?: number;
  /** Uniform noise amplitude (0..1) everywhere. */
  noise?: number;
  /** Speech for 0.6 s of every second, silence (plus noise) for the rest. */
  pauses?: boolean;
}

export function wav(o: WavOptions = {}): Buffer {
  const sampleRate = o.sampleRate ?? 16_000;
  const n = Math.round(sampleRate * (o.seconds ?? 1));
  const buf = Buffer.alloc(44 + n * 2);
  buf.write('RIFF', 0);
  buf.writeUInt32LE(36 + n * 2, 4);
  buf.write('WAVE', 8);
  buf.write('fmt ', 12);
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(1, 22); // mono
  buf.writeUInt32LE(sampleRate, 24);
  buf.writeUInt32LE(sampleRate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36);
  buf.writeUInt32LE(n * 2, 40);
  let seed = 12345;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return (seed / 0x7fffffff) * 2 - 1;
  };
  const amp = o.amplitude ?? 0.5;
  const freq = o.frequency ?? 220;
  for (let i = 0; i < n; i++) {
    const t = i / sampleRate;
    const speaking = !o.pauses || t % 1 < 0.6;
    const tone = speaking ? amp * Math.sin(2 * Math.PI * freq * t) * (0.6 + 0.4 * Math.sin(2 * Math.PI * 3 * t)) : 0;
    const v = tone + (o.noise ?? 0) * random();
    buf.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(v * 32767))), 44 + i * 2);
  }
  return buf;
}

/**
 * A 16 kHz mono WAV of tones and silences in turn: `{hz, seconds}` is a tone (amplitude 0.5), `{seconds}` silence.
 * The fake backend names each tone by its pitch, so a transcript says where each of its segments came from.
 */
export function tones(parts: { hz?: number; seconds: number }[]): Buffer {
  const rate = 16_000;
  const samples: number[] = [];
  for (const part of parts) {
    const n = Math.round(part.seconds * rate);
    for (let i = 0; i < n; i++) samples.push(part.hz ? 0.5 * Math.sin((2 * Math.PI * part.hz * i) / rate) : 0);
  }
  const buf = wav({ seconds: samples.length / rate, amplitude: 0 });
  samples.forEach((v, i) => buf.writeInt16LE(Math.round(v * 32767), 44 + i * 2));
  return buf;
}

export interface VideoPage {
  title: string;
  media: Buffer;
  mediaType?: string;
  /** The caption file; undefined: the page has no captions track. */
  vtt?: string;
  /**
   * Seconds: the page describes its video in JSON-LD (`VideoObject` with `duration` and `contentUrl`, no
   * `<video>` element), the way yt-dlp learns a length before downloading. No captions then.
   */
  duration?: number;
}

/** An entry of a feed: a page of the site (by name) or any URL, with a title and, optionally, a length. */
export interface FeedItem {
  page?: string;
  url?: string;
  title: string;
  /** Seconds, as `<itunes:duration>`: what yt-dlp's flat listing reports before visiting the entry. */
  duration?: number;
}

/**
 * A "video site": GET /watch/<name> is an HTML page, /media/<name>.wav its audio, /subs/<name>.en.vtt its captions,
 * /feed/<name>.xml a playlist: a podcast RSS feed, which yt-dlp's generic extractor lists as a playlist (each
 * item's `<link>` an entry, `<itunes:duration>` its length).
 */
export class VideoSite {
  readonly pages = new Map<string, VideoPage>();
  readonly feeds = new Map<string, { title: string; items: FeedItem[] }>();
  readonly hits: string[] = [];
  url = '';
  private server: http.Server | undefined;

  static async start(): Promise<VideoSite> {
    const site = new VideoSite();
    site.server = http.createServer((req, res) => site.serve(req, res));
    await new Promise<void>((r) => site.server!.listen(0, '127.0.0.1', r));
    site.url = `http://127.0.0.1:${(site.server.address() as { port: number }).port}`;
    return site;
  }

  add(name: string, page: VideoPage): string {
    this.pages.set(name, page);
    return `${this.url}/watch/${name}`;
  }

  addFeed(name: string, feed: { title: string; items: FeedItem[] }): string {
    this.feeds.set(name, feed);
    return `${this.url}/feed/${name}.xml`;
  }

  private feed(name: string): string | undefined {
    const feed = this.feeds.get(name);
    if (!feed) return undefined;
    const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const items = feed.items.map((i) => {
      const link = i.url ?? `${this.url}/watch/${i.page}`;
      const duration = i.duration !== undefined ? `<itunes:duration>${i.duration}</itunes:duration>` : '';
      return `<item><title>${esc(i.title)}</title><link>${esc(link)}</link>${duration}</item>`;
    });
    return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>${esc(feed.title)}</title><link>${this.url}/</link><description>test feed</description>
${items.join('\n')}
</channel></rss>`;
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    this.hits.push(url.pathname);
    const feed = /^\/feed\/([a-z0-9-]+)\.xml$/.exec(url.pathname);
    if (feed) {
      const xml = this.feed(feed[1]!);
      if (xml === undefined) res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      else res.writeHead(200, { 'Content-Type': 'application/rss+xml; charset=utf-8' }).end(xml);
      return;
    }
    const m = /^\/(watch|media|subs)\/([a-z0-9-]+)(?:\.(?:wav|en\.vtt))?$/.exec(url.pathname);
    const page = m ? this.pages.get(m[2]!) : undefined;
    if (!m || !page) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    const name = m[2]!;
    if (m[1] === 'watch' && page.duration !== undefined) {
      const ld = { '@context': 'https://schema.org', '@type': 'VideoObject', name: page.title, duration: `PT${page.duration}S`, contentUrl: `${this.url}/media/${name}.wav`, uploadDate: '2026-01-01' };
      const html = `<!doctype html><html><head><title>${page.title}</title><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body><h1>${page.title}</h1></body></html>`;
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
    } else if (m[1] === 'watch') {
      const track = page.vtt !== undefined ? `<track kind="captions" src="/subs/${name}.en.vtt" srclang="en" label="English">` : '';
      const html = `<!doctype html><html><head><title>${page.title}</title><meta property="og:title" content="${page.title}"></head>
<body><h1>${page.title}</h1><video controls><source src="/media/${name}.wav" type="${page.mediaType ?? 'audio/wav'}">${track}</video></body></html>`;
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
    } else if (m[1] === 'media') {
      res.writeHead(200, { 'Content-Type': page.mediaType ?? 'audio/wav', 'Content-Length': page.media.length });
      res.end(req.method === 'HEAD' ? undefined : page.media);
    } else if (page.vtt !== undefined) {
      res.writeHead(200, { 'Content-Type': 'text/vtt; charset=utf-8' }).end(page.vtt);
    } else {
      res.writeHead(404).end();
    }
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()));
  }
}
