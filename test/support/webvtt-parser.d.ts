/** The W3C's WebVTT parser and validator (webvtt-parser): only what the tests use. */
declare module 'webvtt-parser' {
  export interface VttNode {
    type: 'text' | 'object' | 'timestamp';
    name?: string;
    value?: string;
    children?: VttNode[];
  }
  export interface VttCue {
    id: string;
    startTime: number;
    endTime: number;
    text: string;
    tree: { children: VttNode[] };
  }
  export class WebVTTParser {
    constructor(entities?: Record<string, string>);
    parse(input: string, mode?: 'subtitles' | 'chapters' | 'metadata'): { cues: VttCue[]; errors: { message: string; line: number }[]; time: number };
  }
}
