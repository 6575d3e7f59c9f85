import { describe, expect, it } from 'vitest';
import { LEDGER_SCHEMA_ID, getLedgerSchema, ledgerSchema, validateLedger } from '../../ledger/validate.js';
import { validLedger, type AnyJson } from './helpers.js';

const schema = ledgerSchema as AnyJson;

// Every subschema that describes a property (or an array item / $defs entry) must carry a title and a description.
function undocumented(node: AnyJson, where: string): string[] {
  if (typeof node !== 'object' || node === null) return [];
  const missing: string[] = [];
  if (typeof node.title !== 'string' || typeof node.description !== 'string') missing.push(where);
  for (const [name, sub] of Object.entries<AnyJson>(node.properties ?? {})) missing.push(...undocumented(sub, `${where}/properties/${name}`));
  if (node.items && node.items.$ref === undefined) missing.push(...undocumented(node.items, `${where}/items`));
  return missing;
}

describe('findings-ledger schema', () => {
  it('is draft 2020-12 with a stable $id', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe('https://gristmill.dev/schemas/findings-ledger.schema.json');
    expect(LEDGER_SCHEMA_ID).toBe(schema.$id);
  });

  it('has $defs for finding, member, signal, config, engine and keptSeparate', () => {
    expect(Object.keys(schema.$defs)).toEqual(
      expect.arrayContaining(['finding', 'member', 'signal', 'config', 'engine', 'keptSeparate']),
    );
  });

  it('documents the root, every property and every definition', () => {
    const missing = undocumented(schema, '#');
    for (const [name, def] of Object.entries<AnyJson>(schema.$defs)) missing.push(...undocumented(def, `#/$defs/${name}`));
    expect(missing).toEqual([]);
  });

  it('closes every object in the format', () => {
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.summary.additionalProperties).toBe(false);
    for (const name of ['finding', 'member', 'signal', 'config', 'engine', 'keptSeparate']) {
      expect(schema.$defs[name].additionalProperties, name).toBe(false);
    }
  });

  it('has one example, and it is a valid ledger', () => {
    expect(schema.examples).toHaveLength(1);
    expect(validateLedger(schema.examples[0])).toEqual({ valid: true, errors: [] });
  });

  it('accepts the test fixture', () => {
    expect(validateLedger(validLedger())).toEqual({ valid: true, errors: [] });
  });

  it('getLedgerSchema returns an independent copy', () => {
    const copy = getLedgerSchema();
    expect(copy).toEqual(ledgerSchema);
    (copy as AnyJson).title = 'changed';
    expect(schema.title).toBe('Gristmill findings ledger');
    expect(validateLedger(validLedger()).valid).toBe(true);
  });
});
