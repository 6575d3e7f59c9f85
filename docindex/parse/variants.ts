/**
 * Code blocks that differ only by package manager (`npm install x`, then `yarn add x`, then `pnpm add x`, often in
 * tabs) say one thing: they are folded into one snippet that lists the variants, instead of one snippet each with
 * the same title.
 */

const MANAGERS = new Set(['npm', 'npx', 'yarn', 'pnpm', 'pnpx', 'bun', 'bunx', 'deno']);
/**
 * Subcommands that name the action, not a package, by what they do: `npm install x` and `yarn add x` install the
 * same x, but `yarn remove x` does the opposite, so the action's class stays in the key.
 */
const ACTIONS: Record<string, string> = {
  install: 'add', i: 'add', add: 'add', ci: 'add', global: 'add',
  remove: 'remove', rm: 'remove', uninstall: 'remove', un: 'remove',
  run: 'run', exec: 'run', dlx: 'run', x: 'run',
  create: 'create', init: 'create',
  update: 'update', up: 'update', upgrade: 'update',
};
/** npx runs npm's packages, pnpx pnpm's, bunx bun's. */
const FAMILY: Record<string, string> = { npx: 'npm', pnpx: 'pnpm', bunx: 'bun' };
const SHELL = new Set(['bash', 'sh', 'shell', 'zsh', 'console', 'shellscript', 'powershell', 'fish', 'cmd', 'batch', 'text']);

/** The manager of a block and what it acts on, when every line is one manager's command; else null. */
export function managerCommand(content: string, language: string | null): { manager: string; key: string } | null {
  if (language !== null && !SHELL.has(language)) return null;
  let manager: string | null = null;
  const keys: string[] = [];
  for (const raw of content.split('\n')) {
    const line = raw.trim().replace(/^[$>]\s+/, '');
    if (!line || line.startsWith('#')) continue;
    const words = line.split(/\s+/);
    const m = words[0]!.toLowerCase();
    if (!MANAGERS.has(m)) return null;
    const family = FAMILY[m] ?? m;
    if (manager !== null && manager !== family) return null;
    manager = family;
    // npx, pnpx and bunx run a package, as `yarn dlx` does.
    const named = ACTIONS[words[1]?.toLowerCase() ?? ''];
    const action = FAMILY[m] ? 'run' : named;
    const rest = words.slice(named && !FAMILY[m] ? 2 : 1).filter((w) => !w.startsWith('-'));
    keys.push([action ?? '', ...rest].join(' '));
  }
  return manager === null ? null : { manager, key: keys.join('\n') };
}

/**
 * `next` folded into `previous` when both are the same command for different package managers (and `previous` does
 * not already list that manager); else null. Each variant after the first is introduced by a `# or, with <manager>:`
 * comment line.
 */
export function foldVariant(previous: { content: string; language: string | null }, next: { content: string; language: string | null }): string | null {
  const first = managerCommand(previous.content.split('\n# or, with ')[0]!, previous.language);
  const other = managerCommand(next.content, next.language);
  if (!first || !other || first.key !== other.key) return null;
  const listed = [first.manager, ...[...previous.content.matchAll(/^# or, with ([\w-]+):$/gm)].map((m) => m[1])];
  if (listed.includes(other.manager)) return null;
  return `${previous.content}\n# or, with ${other.manager}:\n${next.content}`;
}
