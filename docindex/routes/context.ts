import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Context } from 'koa';
import { contextJson, contextParams, contextText, retrieveContext } from '../search/context.js';
import { Context7Error, context7ErrorBody, context7Json, context7LibraryId, context7LibraryList, context7MultiJson, context7MultiText, context7Text, searchLibraries, toContext7Error } from '../search/context7.js';
import { multiContextJson, multiContextText, retrieveAcrossLibraries } from '../search/multi-library.js';
import { isLibraryList } from '../ids.js';
import { createMcpServer } from '../search/mcp.js';
import { Timings, timedSync } from '../search/timings.js';
import { onDemand } from '../on-demand.js';
import { apiSchemas } from '../../schemas/index.js';
import { docindexSchemas } from '../schemas.js';
import type { RouteFactory } from '../../api/deps.js';
import type { RouteSpec } from '../../api/routes.js';

/**
 * Context retrieval (docs/documentation-index.md, "Search and context"): GET /api/v1/context, the Context7-compatible library search (v1 and v2) and v2
 * context, and the MCP server over streamable HTTP at /mcp. Registered before the library routes, so
 * /api/v1/libs/search is not taken for a library id.
 */
/**
 * Sends one library's answer: the body built and serialised (JSON written here, so the time it takes is measured) as
 * phase `serialise`, and the Server-Timing header with every phase and the `total` since `started` (docs/api.md).
 */
function answer(ctx: Context, timings: Timings, started: number, type: 'json' | 'txt', build: () => unknown): void {
  const body = timedSync(timings, 'serialise', () => {
    const b = build();
    return typeof b === 'string' ? b : JSON.stringify(b);
  });
  timings.add('total', performance.now() - started);
  ctx.set('Server-Timing', timings.header());
  ctx.type = type === 'txt' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
  ctx.body = body;
}

export const contextRoutes: RouteFactory = (deps) => {
  const tags = ['documentation index'];
  // Searches and queries of assistants may register what nobody registered (docindex/on-demand.ts).
  const retrieval = { ...deps, onDemand: onDemand(deps) };
  const q = (ctx: Context) => ({ ...ctx.query }) as Record<string, unknown>;
  const libsSearch = async (ctx: Context) => {
    const raw = q(ctx);
    const s = (v: unknown) => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '');
    const libraryName = s(raw.libraryName);
    const query = s(raw.query);
    if (!libraryName.trim() && !query.trim()) throw new Context7Error(400, 'validation_error', 'libraryName (or query) is required');
    ctx.body = await searchLibraries(retrieval, libraryName, query);
  };
  // API_KEY covers /mcp too (api/auth.ts).
  const mcp = async (ctx: Context) => {
    // Stateless: one server and transport per request; the transport writes the response itself.
    const server = createMcpServer(retrieval);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.respond = false;
    ctx.res.on('close', () => {
      // Nothing is left to tell the client; a failure to close must not become an unhandled rejection.
      transport.close().catch(() => undefined);
      server.close().catch(() => undefined);
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, (ctx.request as { body?: unknown }).body);
  };
  const mcpRoute: RouteSpec = {
    method: 'POST',
    path: '/mcp',
    summary: 'MCP over streamable HTTP (stateless): tools resolve-library-id and query-docs',
    tags: ['mcp'],
    responses: { 200: { description: 'A JSON-RPC answer' } },
    handler: mcp,
  };
  // Stateless: there is no stream to open (GET) and no session to end (DELETE). The MCP transport says a server
  // without them answers 405 (rather than holding a stream open that nothing will ever write to); the SDK's own
  // stateless server answers the same JSON-RPC error.
  const mcpNotAllowed = (method: 'GET' | 'DELETE'): RouteSpec => ({
    method,
    path: '/mcp',
    summary: `MCP over streamable HTTP: ${method} is not offered (stateless server), 405`,
    tags: ['mcp'],
    responses: { 405: { description: 'Method not allowed: POST JSON-RPC messages instead' } },
    handler: async (ctx: Context) => {
      ctx.status = 405;
      ctx.set('Allow', 'POST');
      ctx.body = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; POST JSON-RPC messages to /mcp' }, id: null };
    },
  });

  return [
    {
      method: 'GET',
      path: '/api/v1/context',
      summary: 'Documentation snippets of a library (or a version) for a query',
      description:
        'Checks in order: libraryId, query, libraryId parse (400 MISSING_PARAMETER), library (404 LIBRARY_NOT_FOUND), ' +
        'state (503 INDEXING_IN_PROGRESS), version: exact tag, then a commit-hash prefix of 7+ characters (404 VERSION_NOT_FOUND). ' +
        'Up to 50 results; the token budget applies with type=txt or a tokens parameter (the first snippet is always kept). ' +
        'Several libraries: libraryId comma-separated or repeated (at most 20), or * for every indexed library; results of all merged on one scale, ' +
        'each naming its library; libraries missing or being indexed are skipped and listed in `skipped`.',
      tags,
      query: docindexSchemas.contextQuery,
      responses: {
        200: {
          description:
            'JSON `{snippets, resultCount, rules, searchMode, repository, localSource, version, versionTags}`, or text with type=txt; ' +
            'for several libraries `{snippets (each with libraryId, versionTag), resultCount, searchMode, libraries, skipped, versionTags}`',
        },
        400: { description: 'MISSING_PARAMETER, TOO_MANY_LIBRARIES', schema: apiSchemas.error },
        404: { description: 'LIBRARY_NOT_FOUND, VERSION_NOT_FOUND', schema: apiSchemas.error },
        503: { description: 'INDEXING_IN_PROGRESS', schema: apiSchemas.error },
      },
      handler: async (ctx: Context) => {
        const started = performance.now();
        const p = contextParams(q(ctx));
        if (isLibraryList(p.libraryId)) {
          const result = await retrieveAcrossLibraries(retrieval, p);
          if (p.type === 'txt') ctx.type = 'text/plain; charset=utf-8';
          ctx.body = p.type === 'txt' ? multiContextText(result) : multiContextJson(result);
          return;
        }
        const timings = new Timings();
        const result = await retrieveContext(retrieval, p, { timings });
        answer(ctx, timings, started, p.type, () => (p.type === 'txt' ? contextText(result) : contextJson(result)));
      },
    },
    {
      method: 'GET',
      path: '/api/v1/libs/search',
      summary: 'Find libraries by name (Context7-compatible)',
      description: '`libraryName` and `query`; results ranked by how well the name, title and description match. Errors are `{error, message}`.',
      tags,
      query: docindexSchemas.libsSearchQuery,
      responses: { 200: { description: '`{results, searchFilterApplied}`' } },
      handler: async (ctx: Context) => {
        ctx.state.formatError = context7ErrorBody;
        await libsSearch(ctx);
      },
    },
    {
      method: 'GET',
      path: '/api/v2/libs/search',
      summary: 'Context7 v2: find libraries by name',
      tags: ['context7'],
      query: docindexSchemas.libsSearchQuery,
      responses: { 200: { description: '`{results, searchFilterApplied}`' } },
      handler: libsSearch,
    },
    {
      method: 'GET',
      path: '/api/v2/context',
      summary: 'Context7 v2: documentation of a library for a query',
      description:
        'libraryId `/owner/repo`, `/owner/repo/version` or `/owner/repo@version`; `type` txt (default) or json (`{codeSnippets, infoSnippets, rules}`). ' +
        'Several libraries as for /api/v1/context (comma-separated or repeated, or *); each snippet then carries libraryId and versionTag, and JSON `skipped`. ' +
        'Errors `{error, message}`: 400 validation_error / invalid_library_id / too_many_libraries, 401 invalid_api_key, 202 library_not_finalized, 404 library_not_found / tag_not_found / no_snippets_found.',
      tags: ['context7'],
      query: docindexSchemas.contextQuery,
      responses: { 200: { description: 'Text (default) or JSON' } },
      handler: async (ctx: Context) => {
        const started = performance.now();
        try {
          const raw = q(ctx);
          const p = contextParams(raw, { type: 'txt' });
          if (!p.libraryId.trim()) throw new Context7Error(400, 'validation_error', 'libraryId is required');
          if (!p.query.trim()) throw new Context7Error(400, 'validation_error', 'query is required');
          const waitMs = deps.config.sources.onDemandWaitMs;
          if (isLibraryList(p.libraryId)) {
            p.libraryId = context7LibraryList(p.libraryId);
            const result = await retrieveAcrossLibraries(retrieval, p, { waitMs });
            if (!result.resultCount) throw new Context7Error(404, 'no_snippets_found', `No snippets of ${result.libraries.map((l) => l.requested).join(', ') || 'any library'} match "${p.query}"`);
            if (p.type === 'txt') ctx.type = 'text/plain; charset=utf-8';
            ctx.body = p.type === 'txt' ? context7MultiText(result) : context7MultiJson(result);
            return;
          }
          p.libraryId = context7LibraryId(p.libraryId);
          const timings = new Timings();
          const result = await retrieveContext(retrieval, p, { waitMs, timings });
          if (!result.resultCount) throw new Context7Error(404, 'no_snippets_found', `No snippets of ${result.repository.id} match "${p.query}"`);
          answer(ctx, timings, started, p.type, () => (p.type === 'txt' ? context7Text(result) : context7Json(result)));
        } catch (err) {
          throw toContext7Error(err);
        }
      },
    },
    mcpRoute,
    mcpNotAllowed('GET'),
    mcpNotAllowed('DELETE'),
  ];
};
