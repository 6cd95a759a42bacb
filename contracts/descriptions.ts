// What each field of the OpenAPI document means, in one place: server/http/openapi.ts gives every
// property and parameter without a description of its own (a zod `.meta({ description })`) the
// one found here. Kept apart from the zod schemas so that the shapes stay readable and a word
// shared by many schemas (`asset_class`, `page`) is written once. Words follow the interface
// specification and DESIGN where it extends it; a test
// (test/integration/openapi.test.ts) lists every property or parameter still without one.

import { BY_NAME, PARAMETERS } from './descriptions/by-name.ts';
import { BY_SCOPE } from './descriptions/by-scope.ts';

/**
 * The description of a property or parameter called `name`, found in the given scopes (most
 * specific first: `Order`, `adminSetSimPrice.request`, `decision_output`), then by name alone;
 * undefined when the dictionary has none, which the OpenAPI test reports.
 */
export const descriptionOf = (name: string, scopes: readonly string[], parameter = false): string | undefined => {
  for (const scope of scopes) {
    const found = BY_SCOPE[`${scope}.${name}`];
    if (found !== undefined) return found;
  }
  return (parameter ? PARAMETERS[name] : undefined) ?? BY_NAME[name];
};
