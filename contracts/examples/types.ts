// How an operation's examples are written: the procedure's whole input and its success answer,
// each typed by the procedure's own zod schemas, so tsc refuses an example that drifts from them.
import type { z } from 'zod';

/**
 * One operation's examples. `input` is what the procedure receives: its path and query parameters
 * take their examples from the fields of the same name, the request body is the rest.
 * `output` is the success answer's body (none for a 204). `textInput` is the whole input again as
 * a route with a text body (`textBodyField`, e.g. a CSV import) receives it: that field is the
 * text of the body, the others come in the query string.
 */
export interface OperationExample {
  input?: unknown;
  output?: unknown;
  textInput?: unknown;
}

/**
 * An operation's examples, checked against its input schema `I` (as a caller sends it:
 * `z.input`) and its output schema `O` (as the procedure answers: `z.output`). A procedure
 * without input or without an answer names `z.ZodVoid`.
 */
export const example = <I extends z.ZodType, O extends z.ZodType>(examples: { input?: z.input<I>; output?: z.output<O>; textInput?: z.input<I> }): OperationExample =>
  examples;
