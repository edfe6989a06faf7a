/**
 * Checks every JSON body before schema validation (which, like everything downstream, recurses
 * and would overflow the stack on absurd nesting): at most {@link MAX_BODY_DEPTH} levels and
 * {@link MAX_BODY_VALUES} values, and well-formed Unicode in every string and key (a lone UTF-16
 * surrogate cannot be stored: MongoDB would silently replace it), and no key that could poison a
 * prototype downstream: `__proto__` anywhere, or `constructor` holding an object with a
 * `prototype` key (the two shapes Fastify's default JSON parser refused, see json-body.ts).
 * Violations are 400s. The walk is iterative, so the check itself cannot overflow.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidRequestError, MAX_BODY_DEPTH } from '@switchyard/domain';

export { MAX_BODY_DEPTH };
/** Most values (objects, arrays, scalars) in one body. */
export const MAX_BODY_VALUES = 200_000;

/** Message for a prototype-poisoning key, or null when `key` (holding `item`) is harmless. */
function poisoningKey(key: string, item: unknown): string | null {
  if (key === '__proto__') return "The request body contains the key '__proto__', which is not allowed";
  if (key === 'constructor' && item !== null && typeof item === 'object' && Object.hasOwn(item, 'prototype')) {
    return "The request body contains the key 'constructor' holding a 'prototype' key, which is not allowed";
  }
  return null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Throws InvalidRequestError when `body` breaks one of the rules above. */
export function checkBody(body: unknown): void {
  const stack: Array<[unknown, number]> = [[body, 0]];
  let values = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (++values > MAX_BODY_VALUES) throw new InvalidRequestError(`Request body has more than ${MAX_BODY_VALUES} values`);
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) throw new InvalidRequestError('Request body contains a string that is not well-formed Unicode (a lone surrogate)');
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH) throw new InvalidRequestError(`Request body nests deeper than ${MAX_BODY_DEPTH} levels`);
    if (Array.isArray(value)) {
      for (const item of value) stack.push([item, depth + 1]);
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key)) throw new InvalidRequestError('Request body contains a key that is not well-formed Unicode (a lone surrogate)');
      const poisoning = poisoningKey(key, item);
      if (poisoning) throw new InvalidRequestError(poisoning);
      stack.push([item, depth + 1]);
    }
  }
}

/** Installs the check as a preValidation hook on every route of `app`. */
export function installBodyGuard(app: FastifyInstance): void {
  // A callback hook: no promise per request (most requests, every GET, have no body).
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined) return done();
    try {
      checkBody(request.body);
    } catch (error) {
      return done(error as Error);
    }
    done();
  });
}
