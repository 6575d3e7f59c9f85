import Router from '@koa/router';
import type { SchemaObject } from 'ajv';
import type { Context, Middleware } from 'koa';
import { apiSchemas } from '../schemas/index.js';
import { validate } from './validate.js';

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
  /** The largest JSON/form/text body of this route, when it is not BODY_LIMIT (e.g. webhooks carrying transcripts). */
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

export class Routes {
  readonly specs: RouteSpec[] = [];
  readonly router = new Router();
  private readonly bodyLimits = new WeakMap<object, number>();

  /** The body limit of the route a request goes to, when that route sets its own. */
  bodyLimitFor(path: string, method: string): number | undefined {
    for (const layer of this.router.match(path, method).pathAndMethod) {
      const limit = this.bodyLimits.get(layer);
      if (limit !== undefined) return limit;
    }
    return undefined;
  }

  add(...specs: RouteSpec[]): this {
    for (const spec of specs) {
      this.specs.push(spec);
      const checks: Middleware = async (ctx: Context, next) => {
        if (spec.query) ctx.state.query = validate('query', spec.query, { ...ctx.query });
        if (spec.body) validate('body', spec.body, (ctx.request as { body?: unknown }).body ?? {});
        await next();
      };
      const layer = this.router.register(spec.path, [spec.method], [checks, spec.handler]);
      if (spec.bodyLimitBytes !== undefined) this.bodyLimits.set(layer, spec.bodyLimitBytes);
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
