import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { asUnavailable } from '../../api/errors.js';
import { AppError } from '../../core/errors.js';
import { logUnexpected } from '../../core/log.js';
import { redact } from '../../core/redact.js';
import { contextParams, indexedLine, retrieveContext, type RetrievalDeps } from './context.js';
import { context7LibraryId, context7LibraryList, context7MultiText, context7Text, resolveLibraryText, searchLibraries } from './context7.js';
import { isLibraryList } from '../ids.js';
import { retrieveAcrossLibraries } from './multi-library.js';

/**
 * The MCP server: Context7's two tools, calling the retrieval code directly. `query-docs` answers Context7's txt
 * layout and also takes `searchMode`, `alpha` and `tokens`; it accepts the aliases clients send (`userQuery`,
 * `question` for `query`; `context7CompatibleLibraryID`, `libraryID` for `libraryId`). Served over streamable HTTP
 * at /mcp on the API (docindex/routes/context.ts) and over stdio (`npm run mcp`, bin/mcp.ts).
 */
export function createMcpServer(deps: RetrievalDeps): McpServer {
  const server = new McpServer({ name: 'gristmill', version: '0.1.0' });
  const text = (t: string, isError = false) => ({ content: [{ type: 'text' as const, text: t }], ...(isError && { isError: true }) });
  type Answer = ReturnType<typeof text>;
  // A tool's failure is its answer: ours say what to fix; anything else (the SDK would send its raw message, SQL and
  // all) is logged under an id and answered with that id only.
  const answering =
    <A>(tool: (args: A) => Promise<Answer>) =>
    async (args: A): Promise<Answer> => {
      try {
        return await tool(args);
      } catch (thrown) {
        const dependency = asUnavailable(thrown);
        if (dependency) deps.log.error('MCP tool failed', { error: dependency.message, cause: redact(thrown instanceof Error ? thrown.message : String(thrown)) });
        const err = dependency ?? thrown;
        if (err instanceof AppError) return text(`${err.code}: ${err.message}`, true);
        return text(`Internal error (logged as ${logUnexpected(deps.log, 'MCP tool failed', err)})`, true);
      }
    };

  server.registerTool(
    'resolve-library-id',
    {
      title: 'Resolve library id',
      description:
        'Finds the Gristmill (Context7-compatible) library id for a package or product name. Call it before query-docs unless the user gave an id of the form /owner/repo.',
      inputSchema: {
        libraryName: z.string().optional().describe('Library name to search for, e.g. "next.js"'),
        query: z.string().optional().describe('What the user wants to do with it; helps rank the libraries'),
      },
    },
    answering(async (args) => {
      const name = args.libraryName ?? '';
      if (!name.trim() && !args.query?.trim()) return text('libraryName is required', true);
      const { results } = await searchLibraries(deps, name, args.query ?? '');
      return text(resolveLibraryText(results));
    }),
  );

  server.registerTool(
    'query-docs',
    {
      title: 'Query documentation',
      description:
        'Answers a question from the indexed documentation of one library (optionally one version: /owner/repo/v1.2.0), of several ' +
          '(libraryIds, or libraryId comma-separated; at most 20), or of every indexed library (libraryId "*"). searchMode: auto, keyword, semantic or hybrid; alpha weighs semantic against keyword (0 to 1); tokens is the budget (default 10000).',
      inputSchema: {
        libraryId: z.string().optional().describe('Library id, e.g. /vercel/next.js or /vercel/next.js/v14.2.0; several comma-separated; * for all'),
        libraryIds: z.array(z.string()).optional().describe('Several library ids, searched together'),
        context7CompatibleLibraryID: z.string().optional().describe('Alias of libraryId'),
        libraryID: z.string().optional().describe('Alias of libraryId'),
        query: z.string().optional().describe('The question or task'),
        userQuery: z.string().optional().describe('Alias of query'),
        question: z.string().optional().describe('Alias of query'),
        topic: z.string().optional().describe('Alias of query (older clients)'),
        tokens: z.union([z.number(), z.string()]).optional().describe('Token budget, default 10000'),
        searchMode: z.string().optional().describe('auto (default), keyword, semantic or hybrid'),
        alpha: z.union([z.number(), z.string()]).optional().describe('0 = keyword only, 1 = semantic only; default 0.5'),
      },
    },
    answering(async (args) => {
      const one = args.libraryId ?? args.context7CompatibleLibraryID ?? args.libraryID ?? '';
      const libraryId = [...(args.libraryIds ?? []), one].filter((id) => id.trim()).join(',');
      const query = args.query ?? args.userQuery ?? args.question ?? args.topic ?? '';
      const many = isLibraryList(libraryId);
      const p = contextParams({
        libraryId: many ? context7LibraryList(libraryId) : libraryId.trim() ? context7LibraryId(libraryId) : '',
        query,
        type: 'txt',
        ...(args.tokens !== undefined && { tokens: String(args.tokens) }),
        ...(args.searchMode !== undefined && { searchMode: args.searchMode }),
        ...(args.alpha !== undefined && { alpha: String(args.alpha) }),
      });
      const waitMs = deps.config.sources.onDemandWaitMs;
      if (many) {
        const r = await retrieveAcrossLibraries(deps, p, { waitMs });
        const notes = [...r.libraries.map((l) => `${l.requested}: ${indexedLine(l)}`), ...r.skipped.map((s) => `Skipped ${s.libraryId}: ${s.message}`)].join('\n');
        if (!r.resultCount) return text(`No documentation found in ${r.libraries.map((l) => l.requested).join(', ') || 'any library'} for "${p.query}".\n${notes}\n`);
        return text(`${context7MultiText(r)}\n${notes}\n`);
      }
      const result = await retrieveContext(deps, p, { waitMs });
      if (!result.resultCount) return text(`No documentation found in ${result.repository.id} for "${p.query}".`);
      return text(`${context7Text(result)}\n${result.repository.id}: ${indexedLine(result)}\n`);
    }),
  );
  // Registering starts jobs: offered where a Temporal client is there (the API's /mcp; stdio when Temporal answers).
  const registrar = deps.onDemand;
  if (registrar) {
    server.registerTool(
      'index-dependencies',
      {
        title: "Index a project's dependencies",
        description:
          "Makes sure the exact version of each direct dependency in a project's lockfile or manifest (package-lock.json, pnpm-lock.yaml, yarn.lock, " +
          'package.json, requirements.txt, poetry.lock, uv.lock, pyproject.toml, Cargo.lock, Cargo.toml) is indexed; answers the libraryId of each and ' +
          'whether it is ready, queued (being indexed) or unknown.',
        inputSchema: {
          fileName: z.string().max(255).optional().describe('The file name, e.g. package-lock.json'),
          content: z.string().max(10 * 1024 * 1024).describe("The file's text"),
          manifest: z.string().max(1024 * 1024).optional().describe('package.json beside a yarn.lock, pyproject.toml beside a poetry.lock'),
          includeDev: z.boolean().optional().describe('Development dependencies too (default false)'),
        },
      },
      answering(async (args) => {
        const r = await registrar.lockfile(args);
        const line = (d: (typeof r.dependencies)[number]) => `- ${d.name}${d.version ? ` ${d.version}` : ''}: ${d.status}${d.libraryId ? ` (${d.libraryId})` : ''}${d.reason ? ` - ${d.reason}` : ''}`;
        const head = `${r.format} (${r.ecosystem}): ${r.summary.ready} ready, ${r.summary.queued} being indexed, ${r.summary.unknown} unknown`;
        return text([head, '', ...r.dependencies.map(line), ...(r.warnings.length ? ['', ...r.warnings.map((w) => `Note: ${w}`)] : [])].join('\n'));
      }),
    );
  }
  return server;
}
