/**
 * Whether an error means PostgreSQL cannot be reached right now (stopped, restarting, the network or the pool cut
 * off), as opposed to a query that is wrong: the one place that tells the two apart. Drivers wrap errors
 * (MikroORM's DriverException copies the driver's code), so causes and aggregated errors are looked through.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  // SQLSTATE: connection exceptions, the server shutting down or starting up, too many connections.
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|Timeout acquiring a connection|connection is closed|Client has encountered a connection error|terminating connection due to administrator command|the database system is (starting up|shutting down)/i;

export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}
