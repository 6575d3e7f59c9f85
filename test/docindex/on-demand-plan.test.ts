import { describe, expect, it } from 'vitest';
import { lookupPlan } from '../../docindex/on-demand.js';

describe('what an on-demand lookup asks the registries', () => {
  const all = ['npm', 'pypi', 'crates'] as const;

  it('asks the configured registries in order, those the question hints at first', () => {
    expect(lookupPlan('react', 'how do I use hooks', all).ecosystems).toEqual(['npm', 'pypi', 'crates']);
    expect(lookupPlan('pydantic', 'validate a model in python', all).ecosystems).toEqual(['pypi', 'npm', 'crates']);
    expect(lookupPlan('tokio', 'spawn a task in rust', all).ecosystems).toEqual(['crates', 'npm', 'pypi']);
    // A registry that is not configured is never asked, hinted or not.
    expect(lookupPlan('pydantic', 'python', ['npm']).ecosystems).toEqual(['npm']);
  });

  it('tries the name as given, then the spellings products are published under', () => {
    expect(lookupPlan('Next.js', '', all).names).toEqual(['next.js', 'next']);
    expect(lookupPlan('Vue 3', '', all).names).toEqual(['vue 3', 'vue', 'vue-3'].filter((n) => !/\s/.test(n)));
  });

  it('takes an explicit registry by prefix or by library id, scoped npm names included', () => {
    expect(lookupPlan('pypi:Requests', '', all)).toEqual({ ecosystems: ['pypi'], names: ['Requests'] });
    expect(lookupPlan('/npm/@types/node', '', all)).toEqual({ ecosystems: ['npm'], names: ['@types/node'] });
    expect(lookupPlan('/crates/serde/1.0.0', '', all)).toEqual({ ecosystems: ['crates'], names: ['serde'] });
    expect(lookupPlan('crates:serde', '', ['npm']).ecosystems).toEqual([]);
  });

  it('never asks for a name with whitespace or NUL', () => {
    expect(lookupPlan('a\0b', '', all).names.every((n) => !n.includes('\0'))).toBe(true);
  });
});
