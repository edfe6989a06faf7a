/**
 * YAML answers by content negotiation (`Accept: application/yaml`), for the routes that offer
 * them (GET /workflows/{workflow_id} only): JSON stays the default, and `*\/*`, a missing Accept
 * header or one naming no YAML type get JSON. The YAML text is the JSON answer's document (the
 * route's serializer runs first, so both hold the same fields), written so that parsing it with
 * the YAML body parser (yaml-body.ts) gives a deep-equal value back.
 */
import Negotiator from 'negotiator';
import { stringify } from 'yaml';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { YAML_MEDIA_TYPES } from './yaml-body.ts';

/** What a route offering YAML answers, in order of preference (JSON first: the default). */
export const ANSWER_MEDIA_TYPES = ['application/json', ...YAML_MEDIA_TYPES];

/** Content-Type of a YAML answer. */
export const YAML_CONTENT_TYPE = 'application/yaml; charset=utf-8';

/** True when `request`'s Accept header prefers a YAML type to JSON (RFC 9110 negotiation, q-values and wildcards). */
export function wantsYaml(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (accept === undefined) return false;
  const chosen = new Negotiator({ headers: { accept } }).mediaType(ANSWER_MEDIA_TYPES);
  return chosen !== undefined && chosen !== 'application/json';
}

/**
 * `value` as YAML 1.2 text: block style, no line folding, no anchors, strings quoted wherever a
 * plain scalar would read as something else (a number, a boolean, null).
 */
export function toYamlText(value: unknown): string {
  return stringify(value, { version: '1.2', schema: 'core', aliasDuplicateObjects: false, lineWidth: 0 });
}

/**
 * Sends `payload` as JSON, or as YAML when {@link wantsYaml}; either way with `Vary: Accept`.
 * The YAML is made from the route's JSON serialization of `payload` (status 200).
 */
export function sendNegotiated(request: FastifyRequest, reply: FastifyReply, payload: unknown): FastifyReply {
  const vary = reply.getHeader('vary');
  void reply.header('vary', vary === undefined ? 'Accept' : `${String(vary)}, Accept`);
  if (!wantsYaml(request)) return reply.send(payload);
  const document: unknown = JSON.parse(reply.serialize(payload) as string);
  return reply.type(YAML_CONTENT_TYPE).send(toYamlText(document));
}
