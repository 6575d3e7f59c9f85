import { PermanentError, ValidationError } from '../core/errors.js';

/** How the outbound guard (outbound/guard.ts) and its forward proxy say no, for every caller to recognise. */
export const ADDRESS_NOT_ALLOWED = 'ADDRESS_NOT_ALLOWED';

/** The guard's refusal: permanent, since the same URL would be refused again. */
export const refusal = (message: string) => new PermanentError(message, ADDRESS_NOT_ALLOWED);

export const isAddressRefusal = (err: unknown): err is PermanentError => err instanceof PermanentError && err.code === ADDRESS_NOT_ALLOWED;

/** At the API a refused address is the request's fault: 400 ADDRESS_NOT_ALLOWED, pointing at the field if there is one. */
export function asValidationError(err: PermanentError, pointer?: string): ValidationError {
  return new ValidationError(err.message, ADDRESS_NOT_ALLOWED, pointer ? [{ pointer, message: err.message }] : undefined);
}

/** The guard's refusal, said of what was refused ("The post was refused: 10.0.0.5 is a private address; ..."). */
export function refused(what: string, err: PermanentError): PermanentError {
  return refusal(`${what} was refused: ${err.message}`);
}
