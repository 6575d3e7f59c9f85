import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { SchemaObject } from 'ajv';
import type { Context, Middleware } from 'koa';
import { apiSchemas } from '../schemas/index.js';
import { type AccessRule, authorize } from './auth.js';
import { rejectUnsafeInput, validate } from './validate.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ResponseSpec {
  description: string;
  schema?: SchemaObject;
  /** Defaults to application/json. */
  contentType?: string;
}

/**
 * One route: what it takes, what it answers and its handler. Query and body are validated against the schemas
 * before the handler runs (the coerced query is `ctx.state.query`), and the OpenAPI document is built from the
 * same specs.
 */
export interface RouteSpec {
  method: Method;
  /** Koa router syntax: /api/v1/libs/:id */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  query?: SchemaObject;
  body?: SchemaObject;
  /** Optional entries let a factory's array of specs infer without annotations. */
  responses: { [status: number]: ResponseSpec | undefined };
  handler: Middleware;
  /** Who may call it when API_KEY is set (api/auth.ts); the key unless the route says otherwise. */
  access?: AccessRule;
  /**
   * Runs before the body is read, for a route whose callers carry their own credentials (a webhook's token): it
   * refuses a caller by throwing, so nothing it sent is read, and answers this caller's body limit (undefined: the
   * route's).
   */
  admit?: (ctx: Context) => Promise<number | undefined>;
  /** The largest JSON/form/text body of this route, when it is not BODY_LIMIT. */
  bodyLimitBytes?: number;
  /** Bodies the handler reads and checks itself (e.g. multipart uploads), for the OpenAPI document. */
  requestBodies?: { contentType: string; schema: SchemaObject }[];
  /** Kept for a transition only: marked `deprecated` in the OpenAPI document. */
  deprecated?: boolean;
}

declare module 'koa' {
  interface DefaultState {
    query?: Record<string, unknown>;
  }
}

export interface RoutesOptions {
  apiKey: string | undefined;
  /** BODY_LIMIT: the body limit of routes that set none. */
  bodyLimitBytes: number;
}

/**
 * The routes and everything decided per route, in the order a request meets it: who may call it, its body (read
 * only after that, within the route's limit), what no route takes (NUL, deep nesting, huge path parameters), its
 * query and body schemas, its handler. The router is case-sensitive and strict, so `/API/v1/libs`, `/api/v1/libs/`
 * and `//api/v1/libs` reach no route, and nothing is decided on a path other than the one that answers.
 */
export class Routes {
  readonly specs: RouteSpec[] = [];
  readonly router = new Router({ sensitive: true, strict: true });
  private readonly access: ReturnType<typeof authorize>;
  /** One parser per body limit. */
  private readonly parsers = new Map<number, Middleware>();

  constructor(private readonly o: RoutesOptions) {
    this.access = authorize(o.apiKey);
  }

  private parserFor(limit: number): Middleware {
    let parser = this.parsers.get(limit);
    if (!parser) {
      parser = bodyParser({
        enableTypes: ['json', 'form', 'text'],
        jsonLimit: limit,
        formLimit: limit,
        textLimit: limit,
        // Parse errors go to the error handler, which maps them to 400/413 with a stable code.
        onError: (err) => {
          throw err;
        },
      });
      this.parsers.set(limit, parser);
    }
    return parser;
  }

  add(...specs: RouteSpec[]): this {
    for (const spec of specs) {
      this.specs.push(spec);
      const body: Middleware = async (ctx, next) => {
        const limit = (await spec.admit?.(ctx)) ?? spec.bodyLimitBytes ?? this.o.bodyLimitBytes;
        await this.parserFor(limit)(ctx, next);
      };
      const checks: Middleware = async (ctx: Context, next) => {
        rejectUnsafeInput('path', ctx.params);
        rejectUnsafeInput('query', ctx.query);
        rejectUnsafeInput('body', (ctx.request as { body?: unknown }).body);
        if (spec.query) ctx.state.query = validate('query', spec.query, { ...ctx.query });
        if (spec.body) validate('body', spec.body, (ctx.request as { body?: unknown }).body ?? {});
        await next();
      };
      this.router.register(spec.path, [spec.method], [this.access(spec.access), body, checks, spec.handler]);
    }
    return this;
  }

  /** The OpenAPI 3.1 document: JSON Schema 2020-12 is its schema dialect, so the schemas go in as they are. */
  openapi(info: { title: string; version: string; description: string }, serverUrl: string): Record<string, unknown> {
    const components: Record<string, SchemaObject> = {};
    const ref = (schema: SchemaObject): Record<string, string> => {
      const name = String(schema.title ?? schema.$id?.split('/').pop()?.replace(/\.schema\.json$/, ''));
      components[name] = schema;
      return { $ref: `#/components/schemas/${name}` };
    };
    const paths: Record<string, Record<string, unknown>> = {};
    for (const spec of this.specs) {
      const path = spec.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const pathParams = [...spec.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
        name: m[1],
        in: 'path',
        required: true,
        schema: { type: 'string' },
      }));
      const queryParams = Object.entries((spec.query?.properties ?? {}) as Record<string, SchemaObject>).map(
        ([name, schema]) => ({
          name,
          in: 'query',
          required: ((spec.query?.required ?? []) as string[]).includes(name),
          description: schema.description,
          schema,
        }),
      );
      const responses: Record<string, unknown> = {};
      for (const [status, r] of Object.entries(spec.responses)) {
        if (!r) continue;
        responses[status] = {
          description: r.description,
          ...(r.schema && { content: { [r.contentType ?? 'application/json']: { schema: ref(r.schema) } } }),
          ...(!r.schema && r.contentType && { content: { [r.contentType]: {} } }),
        };
      }
      if (spec.query || spec.body) responses['400'] ??= { description: 'Invalid request', content: { 'application/json': { schema: ref(apiSchemas.error) } } };
      (paths[path] ??= {})[spec.method.toLowerCase()] = {
        summary: spec.summary,
        ...(spec.description && { description: spec.description }),
        ...(spec.deprecated && { deprecated: true }),
        // Routes that never want API_KEY say so; the others inherit the document's (the key when API_KEY is set).
        ...(spec.access === 'open' && { security: [{}] }),
        tags: spec.tags,
        operationId: `${spec.method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
        parameters: [...pathParams, ...queryParams],
        ...((spec.body || spec.requestBodies) && {
          requestBody: {
            required: true,
            content: {
              ...(spec.body && { 'application/json': { schema: ref(spec.body) } }),
              ...Object.fromEntries((spec.requestBodies ?? []).map((b) => [b.contentType, { schema: ref(b.schema) }])),
            },
          },
        }),
        responses,
      };
    }
    return {
      openapi: '3.1.0',
      jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
      info,
      servers: [{ url: serverUrl }],
      components: {
        schemas: components,
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Required on /api when API_KEY is set.' } },
      },
      security: [{}, { bearer: [] }],
      paths,
    };
  }
}
