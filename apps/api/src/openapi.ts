/**
 * Builds the OpenAPI document from the routes without opening a port or a real store.
 */
import { buildApp } from './app.ts';
import type { AppServices } from './services/index.ts';

/** Path of the committed document, relative to the repository root. */
export const OPENAPI_FILE = new URL('../../../openapi/openapi.json', import.meta.url);

/**
 * The OpenAPI document as pretty JSON with a trailing newline. Routes are only registered, never
 * called, so the services are not needed.
 */
export async function renderOpenApi(): Promise<string> {
  const app = await buildApp({ services: {} as AppServices, docs: false });
  await app.ready();
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  return text;
}
