import { describe, expect, it } from 'vitest';
import { SseParser } from '../../web/src/sse.js';

/** The UI's event-stream parser (web/src/sse.ts), which follows the streams over fetch so an API key can be sent. */
describe('the event-stream parser', () => {
  it('dispatches named and unnamed events with their ids, skipping comments', () => {
    const p = new SseParser();
    const events = p.push('id: 1\nevent: status\ndata: {"a":1}\n\n: ping\n\nid: 2\ndata: {"b":2}\n\n');
    expect(events).toEqual([
      { event: 'status', data: '{"a":1}', lastEventId: '1' },
      { event: 'message', data: '{"b":2}', lastEventId: '2' },
    ]);
    expect(p.lastEventId).toBe('2');
  });

  it('reassembles events split anywhere across chunks, CRLF included', () => {
    const p = new SseParser();
    const text = 'id: 7\r\nevent: queue-update\r\ndata: {"itemId":"x",\r\ndata: "status":"success"}\r\n\r\n';
    const out = [...text].flatMap((ch) => p.push(ch));
    expect(out).toEqual([{ event: 'queue-update', data: '{"itemId":"x",\n"status":"success"}', lastEventId: '7' }]);
  });

  it('moves the position on an id-only message without dispatching anything, and keeps it for the next event', () => {
    const p = new SseParser();
    expect(p.push('id: 41\n\n')).toEqual([]);
    expect(p.lastEventId).toBe('41');
    expect(p.push('data:x\n\n')).toEqual([{ event: 'message', data: 'x', lastEventId: '41' }]);
  });

  it('drops a half-received event on reset (a new connection) but keeps the position', () => {
    const p = new SseParser();
    p.push('id: 5\ndata: {}\n\nid: 6\ndata: {"cut');
    p.reset();
    expect(p.lastEventId).toBe('5');
    expect(p.push('id: 6\ndata: {"whole":true}\n\n')).toEqual([{ event: 'message', data: '{"whole":true}', lastEventId: '6' }]);
  });

  it('waits for the blank line before dispatching', () => {
    const p = new SseParser();
    expect(p.push('event: done\ndata: {}\n')).toEqual([]);
    expect(p.push('\n')).toEqual([{ event: 'done', data: '{}', lastEventId: undefined }]);
  });
});
