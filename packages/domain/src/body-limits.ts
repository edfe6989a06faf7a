/**
 * Limits on request bodies that more than one edge applies: the API to every body (app.ts,
 * plugins/body-guard.ts), the MCP bridge to the YAML text it parses for the API
 * (yaml-definition.ts).
 */

/** Largest request body the API reads, in bytes of the body as sent (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Deepest body nesting accepted (a maximal node tree with its configs stays well below). */
export const MAX_BODY_DEPTH = 128;
