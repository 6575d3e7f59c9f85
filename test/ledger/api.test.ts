import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { validLedger } from './helpers.js';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ queues: [] });
});
afterAll(() => stack?.stop());

const post = (body: string, type = 'application/json') =>
  fetch(`${stack.url}/api/v1/ledger/validate`, { method: 'POST', headers: { 'Content-Type': type }, body });

describe('POST /api/v1/ledger/validate', () => {
  it('answers valid for a valid ledger', async () => {
    const res = await post(JSON.stringify(validLedger()));
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ valid: true, errors: [] });
  });

  it('lists schema and code-rule violations with pointers', async () => {
    const ledger = validLedger();
    ledger.findings[0].severity = 101;
    ledger.findings[1].id = ledger.findings[0].id;
    const res = await post(JSON.stringify(ledger));
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.valid).toBe(false);
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pointer: '/findings/0/severity', message: expect.stringContaining('100') }),
        expect.objectContaining({ pointer: '/findings/1/id', rule: 'unique-id' }),
      ]),
    );
  });

  it('rejects a body that is not JSON, or not sent as JSON', async () => {
    const bad = await post('{"config": ');
    expect(bad.status).toBe(400);
    expect((await json(bad)).code).toBe('INVALID_JSON');
    const text = await post('config: yes', 'text/plain');
    expect(text.status).toBe(415);
    expect(await json(text)).toEqual({ error: 'Send the ledger as application/json', code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('is in the OpenAPI document with its result schema', async () => {
    const doc = await json(await fetch(`${stack.url}/api/openapi.json`));
    expect(doc.paths['/api/v1/ledger/validate'].post.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/LedgerValidation',
    });
  });
});

describe('GET /api/v1/schema/findings-ledger.json', () => {
  it('serves the draft 2020-12 schema', async () => {
    const res = await fetch(`${stack.url}/api/v1/schema/findings-ledger.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/schema+json');
    const schema = await json(res);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe('https://gristmill.dev/schemas/findings-ledger.schema.json');
    expect(schema.required).toEqual(expect.arrayContaining(['config', 'findings']));
  });
});
