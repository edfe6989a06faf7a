/**
 * TypeBox schemas shared by every resource: error body, pagination, ids, free-form JSON.
 * TypeBox is the `typebox` 1.x package (paired with @fastify/type-provider-typebox 6.x).
 */
import Type, { type Static } from 'typebox';
import { NOT_FOUND_RESOURCES } from '../errors.ts';

/** `{ detail: { error, message, problems?, resource?, details? } }`: the error body of every endpoint. */
export const ErrorBody = Type.Object(
  {
    detail: Type.Object({
      error: Type.String({ description: 'Stable error code, e.g. invalid_request, resource_not_found, conflict' }),
      message: Type.String({ description: 'Human-readable explanation' }),
      problems: Type.Optional(Type.Array(Type.String(), { description: 'Every individual problem found' })),
      resource: Type.Optional(
        Type.Enum([...NOT_FOUND_RESOURCES], { description: 'With resource_not_found from an endpoint: what does not exist (an unknown route has none)' }),
      ),
      details: Type.Optional(
        Type.Object({}, { additionalProperties: true, description: 'Structured facts about the error, e.g. { currentStatus } of a 409 conflict' }),
      ),
    }),
  },
  { title: 'ErrorBody' },
);
export type ErrorBody = Static<typeof ErrorBody>;

/** A 24-hex-digit id (MongoDB ObjectId). Malformed ids are rejected by the routes with 400. */
export const IdString = Type.String({ description: '24-character hex id' });

/** A 24-hex id in a path or query (a malformed one fails validation: 400), described as `description`. */
export function objectIdString(description: string) {
  return Type.String({ pattern: '^[0-9a-fA-F]{24}$', description });
}

/** `schema` or null. */
export const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** Page and page size (1-based `page`; `perPage` 1..100, default 20). */
export const PageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
});
export type PageQuery = Static<typeof PageQuery>;

/** Pagination block of every list response. */
export const Pagination = Type.Object({
  total: Type.Integer(),
  page: Type.Integer(),
  perPage: Type.Integer(),
  totalPages: Type.Integer(),
});
export type Pagination = Static<typeof Pagination>;

/** Builds the pagination block; `totalPages` is 0 when there is nothing. */
export function pagination(total: number, page: number, perPage: number): Pagination {
  return { total, page, perPage, totalPages: Math.ceil(total / perPage) };
}

/**
 * Options of every request-body object (issue #16 item 6): properties the schema does not list
 * are a 400 naming them, so no foreign JSON envelope passes as a body. User data (`config`,
 * `initialInput`, outputs) stays {@link JsonObject}, open to any key.
 */
export const CLOSED = { additionalProperties: false } as const;

/** Any JSON object with any keys (user data: config, inputs, outputs). */
export const JsonObject = Type.Object({}, { additionalProperties: true });
export type JsonObject = Record<string, unknown>;

/** Any JSON value. */
export const JsonValue = Type.Unknown();

/** ISO-8601 timestamp string. */
export const Timestamp = Type.String({ format: 'date-time' });
