/**
 * PEP 508 requirement strings (`name[extra]>=1,<2; python_version < "3.11"`, `name @ url`), as requirements.txt
 * lines and pyproject.toml's `[project]` lists write them. Markers are kept unread: which environment installs
 * what is the project's concern, the documentation is the same.
 */
export interface Requirement {
  name: string;
  /** The version specifier, spaces removed (`>=1,<2`); absent when any version goes. */
  specifier?: string;
  /** The one version an `==` (without a wildcard) or `===` pins. */
  exact?: string;
  /** Set when the requirement names a URL (`name @ https://...`) instead of versions. */
  url: boolean;
}

const HEAD = /^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)[ \t]*(?:\[[^\]]*\])?[ \t]*(.*)$/s;
const CLAUSE = /^[ \t]*(~=|===|==|!=|<=|>=|<|>)[ \t]*([A-Za-z0-9.*+!_-]+)[ \t]*$/;

/** A specifier's clauses, or null when one of them is not a PEP 440 clause. */
function clauses(specifier: string): [string, string][] | null {
  const found: [string, string][] = [];
  for (const part of specifier.split(',')) {
    const match = CLAUSE.exec(part);
    if (!match) return null;
    found.push([match[1]!, match[2]!]);
  }
  return found;
}

/** The requirement, or null when the text is not one. */
export function parseRequirement(line: string): Requirement | null {
  const head = HEAD.exec(line.trim());
  if (!head) return null;
  const name = head[1]!;
  const rest = head[2]!;
  if (rest.startsWith('@')) return { name, url: true };
  const semicolon = rest.indexOf(';');
  let spec = (semicolon === -1 ? rest : rest.slice(0, semicolon)).trim();
  if (spec.startsWith('(') && spec.endsWith(')')) spec = spec.slice(1, -1).trim();
  if (spec === '') return { name, url: false };
  const parts = clauses(spec);
  if (!parts) return null;
  const specifier = parts.map(([op, version]) => `${op}${version}`).join(',');
  const [only] = parts;
  const pinned = parts.length === 1 && only && (only[0] === '===' || (only[0] === '==' && !only[1].includes('*')));
  return { name, specifier, ...(pinned && { exact: only[1] }), url: false };
}
