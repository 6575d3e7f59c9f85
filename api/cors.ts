import type { Context, Next } from 'koa';

/**
 * CORS (docs/api.md): any origin, `Content-Type, Authorization`, and on every route OPTIONS answers 204 with
 * the methods of its route family (for libraries: GET, POST, PATCH, DELETE, OPTIONS). A family is the path up to
 * its resource name: /api/v1/libs/..., /api/jobs/..., /healthz.
 */
export function routeFamily(path: string): string {
  const parts = path.split('/').filter(Boolean);
  const depth = parts[0] === 'api' && /^v\d+$/.test(parts[1] ?? '') ? 3 : parts[0] === 'api' ? 2 : 1;
  return '/' + parts.slice(0, depth).join('/');
}

export function cors(routes: () => readonly { method: string; path: string }[]) {
  let families: Map<string, string> | undefined;
  const methodsOf = (path: string): string | undefined => {
    if (!families) {
      const sets = new Map<string, Set<string>>();
      for (const r of routes()) {
        const f = routeFamily(r.path);
        if (!sets.has(f)) sets.set(f, new Set());
        sets.get(f)!.add(r.method.toUpperCase());
      }
      const order = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
      families = new Map(
        [...sets].map(([f, s]) => [f, [...order.filter((m) => s.has(m)), 'OPTIONS'].join(', ')]),
      );
    }
    return families.get(routeFamily(path));
  };

  return async function corsHeaders(ctx: Context, next: Next): Promise<void> {
    const methods = methodsOf(ctx.path);
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization, Last-Event-ID');
    ctx.set('Access-Control-Expose-Headers', 'Deprecation, Sunset, Retry-After');
    if (methods) ctx.set('Access-Control-Allow-Methods', methods);
    if (ctx.method === 'OPTIONS' && methods) {
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    await next();
  };
}
