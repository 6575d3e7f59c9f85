import { ValidationError } from '../../../core/errors.js';
import type { Ecosystem } from '../types.js';

/** Package names as each ecosystem allows them, checked before a name goes into a registry URL. */
export const INVALID_PACKAGE_NAME = 'INVALID_PACKAGE_NAME';

/** npm (validate-npm-package-name's rule; capitals for the old packages that have them), PEP 508, and cargo's default registry's (crates-io). */
const NAME_RULES: Record<Ecosystem, { pattern: RegExp; max: number; says: string }> = {
  npm: {
    pattern: /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/i,
    max: 214,
    says: 'an npm name is lowercase letters, digits, `-`, `.`, `_` and `~`, optionally under a `@scope/`, not starting with `.` or `_`',
  },
  pypi: { pattern: /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/i, max: 200, says: 'a PyPI name is letters, digits, `.`, `_` and `-`, starting and ending with a letter or digit' },
  crates: { pattern: /^[a-z][a-z0-9_-]*$/i, max: 64, says: 'a crate name is ASCII letters, digits, `_` and `-`, starting with a letter' },
};

/** The name when its ecosystem allows it; else a ValidationError (INVALID_PACKAGE_NAME) that says why. */
export function validPackageName(ecosystem: Ecosystem, name: string, pointer = '/body/name'): string {
  const rule = NAME_RULES[ecosystem];
  const problem =
    typeof name !== 'string' || !name ? 'is empty'
    : name.length > rule.max ? `is longer than ${rule.max} characters`
    : name.includes('..') ? 'contains `..`'
    : !rule.pattern.test(name) ? `is not a valid name: ${rule.says}`
    : null;
  if (!problem) return name;
  const message = `The ${ecosystem} package name ${problem}`;
  throw new ValidationError(message, INVALID_PACKAGE_NAME, [{ pointer, message }]);
}
