// What a procedure declares about itself besides its OpenAPI route.
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { TApiKeyScope } from '../../contracts/auth.ts';
import type { TAppErrorCode } from '../../contracts/errors.ts';

export type ProcedureMeta = OpenApiMeta & {
  /** Success status on REST (201 creation, 202 accepted, 204 no body); 200 when absent. */
  status?: 200 | 201 | 202 | 204;
  /** Still served while an operator has halted the service. */
  haltExempt?: boolean;
  /**
   * The personal API key scope that reaches this procedure (DESIGN §6 "Integrations"); without
   * one, a key is refused (403) here. `live` is asked besides it when the input's `live_mode` is true.
   */
  apiKeyScope?: TApiKeyScope;
  /** Error codes this procedure documents, beyond the ones every route can answer. */
  errors?: TAppErrorCode[];
  /**
   * For a route that documents a non-JSON body (`openapi.contentTypes`, e.g. text/csv): the input
   * field its text fills, the query string carrying the other fields.
   */
  textBodyField?: string;
  /**
   * For a list REST also answers as CSV: asked with `Accept: text/csv` (or `format=csv`), the
   * procedure gets `format: 'csv'` in its input and its output is written by this.
   */
  csv?: (input: unknown, output: unknown) => string;
};
