/**
 * One error type per failure kind. The API maps each to an HTTP status and a stable code in one place
 * (api/errors.ts); activities turn them into retryable or non-retryable Temporal failures.
 */
export interface ErrorDetail {
  /** JSON pointer into the request part that failed, e.g. `/query/limit` or `/body/sourceUrl`. */
  pointer: string;
  message: string;
}

export abstract class AppError extends Error {
  abstract readonly status: number;
  readonly code: string;
  readonly details?: ErrorDetail[];

  constructor(message: string, code: string, details?: ErrorDetail[]) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    if (details) this.details = details;
  }
}

/** Bad input: 400. */
export class ValidationError extends AppError {
  readonly status = 400;
  constructor(message: string, code = 'VALIDATION_ERROR', details?: ErrorDetail[]) {
    super(message, code, details);
  }
}

/** Missing or wrong credentials: 401. */
export class UnauthorizedError extends AppError {
  readonly status = 401;
  constructor(message = 'Missing or invalid API key', code = 'UNAUTHORIZED') {
    super(message, code);
  }
}

/** A request this server will not take from where it came (another site's page, an unknown Host): 403. */
export class ForbiddenError extends AppError {
  readonly status = 403;
  constructor(message: string, code = 'FORBIDDEN') {
    super(message, code);
  }
}

/** A record that does not exist: 404. */
export class NotFoundError extends AppError {
  readonly status = 404;
  constructor(message: string, code = 'NOT_FOUND') {
    super(message, code);
  }
}

/** A duplicate, or a state that does not allow the request: 409. */
export class ConflictError extends AppError {
  readonly status = 409;
  constructor(message: string, code = 'CONFLICT') {
    super(message, code);
  }
}

/** A request body over the configured limit: 413. */
export class PayloadTooLargeError extends AppError {
  readonly status = 413;
  constructor(message: string, code = 'PAYLOAD_TOO_LARGE') {
    super(message, code);
  }
}

/** A request body of a type the route does not take: 415. */
export class UnsupportedMediaTypeError extends AppError {
  readonly status = 415;
  constructor(message: string, code = 'UNSUPPORTED_MEDIA_TYPE') {
    super(message, code);
  }
}

/** A dependency (database, Temporal, a broadcaster) is not available right now: 503. */
export class UnavailableError extends AppError {
  readonly status = 503;
  constructor(
    message: string,
    code = 'SERVICE_UNAVAILABLE',
    /** When to try again: the API sends it as Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message, code);
  }
}

/**
 * A failure that retrying cannot fix (a deleted library, a tag that does not exist, a 4xx from a third party).
 * Activities' retry policies list it as non-retryable, so the job fails at once with this message. Temporal names a
 * failure by its error's class, so kinds of permanent failure are told apart by `code`, not by subclasses (which
 * would be retried).
 */
export class PermanentError extends Error {
  constructor(
    message: string,
    /** A stable code for a kind the API or a caller tells apart (ADDRESS_NOT_ALLOWED, SECRET_UNREADABLE). */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'PermanentError';
  }
}

/**
 * A failure that another attempt may fix: a network error, a timeout, or a third party answering 408, 425, 429 or
 * 5xx, with how long it asked us to wait (Retry-After), if it did. Activities turn the wait into Temporal's next
 * retry delay.
 */
export class RecoverableError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'RecoverableError';
  }
}

/** Configuration that cannot work: raised at startup, never from a request. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
