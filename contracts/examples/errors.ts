// The example error body of the OpenAPI document's 422 answers: the ErrorBody envelope as the
// runtime writes it for a request that fails its input schema.
import type { TErrorBody } from '../errors.ts';

/** A 422 naming the field at fault, or without field errors when the operation takes no input. */
export const validationErrorExample = (field?: string): TErrorBody => ({
  code: 'VALIDATION_ERROR',
  message: 'Request validation failed',
  status: 422,
  ...(field === undefined ? {} : { errors: [{ path: field, message: 'Invalid input' }] }),
});
