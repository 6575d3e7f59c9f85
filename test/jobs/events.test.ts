import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { appendEvent, readEvents, type StoredEvent } from '../../jobs/events.js';
import { EventHub } from '../../jobs/hub.js';
import { pruneEvents } from '../../jobs/housekeeping.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { until } from '../support/until.js';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ queues: [] });
});
afterAll(() => stack?.stop());

const append = (streams: string[], n: number) =>
  stack.orm.em.fork().transactional((tx) => appendEvent(tx, streams, 'tick', { n }));

const waitFor = (pred: () => boolean) => until(async () => pred(), Boolean, { timeoutMs: 10_000, intervalMs: 50 });

describe('the event log', () => {
  it('gives each stream a gap-free sequence, also under concurrent writers', async () => {
    await Promise.all(Array.from({ length: 25 }, (_, i) => append(['s:a', 's:b'], i)));
    for (const stream of ['s:a', 's:b']) {
      const events = await readEvents(stack.orm.em.fork(), stream, 0);
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    }
  });

  it('writes nothing, and uses up no sequence number, when the change rolls back', async () => {
    await append(['s:rollback'], 1);
    await expect(
      stack.orm.em.fork().transactional(async (tx) => {
        await appendEvent(tx, ['s:rollback'], 'tick', { n: 2 });
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');
    await append(['s:rollback'], 3);
    const events = await readEvents(stack.orm.em.fork(), 's:rollback', 0);
    expect(events.map((e) => [e.seq, e.data.n])).toEqual([
      [1, 1],
      [2, 3],
    ]);
  });

  it('refuses to write outside a transaction', async () => {
    await expect(appendEvent(stack.orm.em.fork(), ['s:x'], 'tick', {})).rejects.toThrow(/inside the transaction/);
  });
});

describe('the event hub', () => {
  it('delivers committed events to subscribers in order', async () => {
    const got: StoredEvent[] = [];
    const sub = await stack.hub!.subscribe('s:live', (e) => got.push(e));
    expect(sub.cursor).toBe(0);
    for (let i = 1; i <= 5; i++) await append(['s:live'], i);
    await waitFor(() => got.length === 5);
    expect(got.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    sub.close();
  });

  it('catches up after its LISTEN connection drops: every event once, in order', async () => {
    const hub = new EventHub(stack.databaseUrl, () => stack.orm.em.fork(), createLogger('silent'));
    await hub.start();
    const got: number[] = [];
    const sub = await hub.subscribe('s:reconnect', (e) => got.push(e.seq));
    await append(['s:reconnect'], 1);
    await waitFor(() => got.length === 1);

    await hub.simulateDisconnect();
    expect(hub.ready).toBe(false);
    // Written while nobody listens: their NOTIFYs are lost.
    for (let i = 2; i <= 4; i++) await append(['s:reconnect'], i);
    await waitFor(() => hub.ready);
    await append(['s:reconnect'], 5);
    await waitFor(() => got.length >= 5);
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toEqual([1, 2, 3, 4, 5]);
    sub.close();
    await hub.close();
  });

  it('delivers an event committed while a new subscription reads its cursor (its NOTIFY came before the stream was known)', async () => {
    // The cursor query returns, then waits at a gate; meanwhile an event commits and its NOTIFY arrives.
    let gate: () => void = () => undefined;
    const gated = new Promise<void>((r) => (gate = r));
    let hold = true;
    const fork = () => {
      const em = stack.orm.em.fork();
      const execute = em.execute.bind(em) as (...a: unknown[]) => Promise<unknown>;
      return Object.assign(em, {
        execute: async (...a: unknown[]) => {
          const rows = await execute(...a);
          if (hold && String(a[0]).includes('select last_seq from event_stream')) {
            hold = false;
            await gated;
          }
          return rows;
        },
      }) as typeof em;
    };
    const hub = new EventHub(stack.databaseUrl, fork, createLogger('silent'), 0);
    await hub.start();
    const got: number[] = [];
    const subscribing = hub.subscribe('s:race', (e) => got.push(e.seq));
    await waitFor(() => !hold);
    await append(['s:race'], 1);
    await new Promise((r) => setTimeout(r, 300)); // the NOTIFY has come and gone
    gate();
    const sub = await subscribing;
    expect(sub.cursor).toBe(0);
    await waitFor(() => got.length === 1);
    expect(got).toEqual([1]);
    sub.close();
    await hub.close();
  });

  it('finds events whose NOTIFY never came by polling the streams it serves', async () => {
    const hub = new EventHub(stack.databaseUrl, () => stack.orm.em.fork(), createLogger('silent'), 200);
    await hub.start();
    const got: number[] = [];
    const sub = await hub.subscribe('s:silent', (e) => got.push(e.seq));
    // Committed behind the hub's back: the rows are there, no NOTIFY was sent.
    await stack.orm.em.fork().execute(`insert into event_stream (name, last_seq) values ('s:silent', 1)`);
    await stack.orm.em.fork().execute(`insert into job_event (stream, seq, event, data) values ('s:silent', 1, 'tick', '{}')`);
    await waitFor(() => got.length === 1);
    expect(got).toEqual([1]);
    sub.close();
    await hub.close();
  });

  it('ends open subscriptions when it closes', async () => {
    const hub = new EventHub(stack.databaseUrl, () => stack.orm.em.fork(), createLogger('silent'));
    await hub.start();
    let ended = false;
    await hub.subscribe('s:end', () => undefined, () => (ended = true));
    await hub.close();
    expect(ended).toBe(true);
  });
});

describe('event retention', () => {
  it('deletes only events older than the cutoff, and streams go on numbering after them', async () => {
    for (let n = 1; n <= 3; n++) await append(['s:old', 's:mixed'], n);
    await stack.orm.em.fork().execute(`update job_event set created_at = now() - interval '40 days' where stream in ('s:old', 's:mixed')`);
    await append(['s:mixed'], 4);
    const deleted = await pruneEvents(stack.orm.em.fork(), new Date(Date.now() - 30 * 86_400_000));
    expect(deleted).toBe(6);
    expect(await readEvents(stack.orm.em.fork(), 's:old', 0)).toEqual([]);
    expect((await readEvents(stack.orm.em.fork(), 's:mixed', 0)).map((e) => [e.seq, e.data.n])).toEqual([[4, 4]]);
    await append(['s:old'], 5);
    expect((await readEvents(stack.orm.em.fork(), 's:old', 0)).map((e) => e.seq)).toEqual([4]);
  });
});

describe('the database schema', () => {
  it('matches the entities exactly after the committed migrations', async () => {
    const diff = await stack.orm.schema.getUpdateSchemaSQL({ wrap: false, safe: false, dropTables: false });
    expect(diff.trim()).toBe('');
  });
});
