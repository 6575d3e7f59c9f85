import { describe, expect, it } from 'vitest';
import { join, raw, sql, Sql } from '../../db/sql.js';

describe('sql fragments', () => {
  it('binds each value to its own placeholder, however the fragments were built', () => {
    // Built in the opposite order of the text: the values still follow the placeholders.
    const limit = sql`limit ${10}`;
    const where = sql`where a = ${'x'} and b = ${2}`;
    const query = sql`select * from t ${where} ${limit}`;
    expect(query.text).toBe('select * from t where a = ? and b = ? limit ?');
    expect(query.params).toEqual(['x', 2, 10]);
  });

  it('joins fragments with their values in order, and takes raw text without values', () => {
    const list = join([sql`f(${1})`, raw('g()'), sql`h(${2}, ${3})`], ' || ');
    expect(list.text).toBe('f(?) || g() || h(?, ?)');
    expect(list.params).toEqual([1, 2, 3]);
    expect(join([]).text).toBe('');
    expect(sql`select ${raw('1')}`).toEqual(new Sql('select 1', []));
  });

  it('binds values that look like SQL as values, including arrays and null', () => {
    const query = sql`select ${"1'; drop table t; --"}, ${null}, ${['a', 'b']}`;
    expect(query.text).toBe('select ?, ?, ?');
    expect(query.params).toEqual(["1'; drop table t; --", null, ['a', 'b']]);
  });
});
