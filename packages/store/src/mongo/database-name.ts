/**
 * The database a MongoDB connection string names.
 */

/** Database used when the connection string names none. */
export const DEFAULT_DATABASE_NAME = 'switchyard';

/**
 * The database in the path of `uri` (`mongodb://host/db?opts` or `mongodb+srv://...`), decoded,
 * or {@link DEFAULT_DATABASE_NAME} when the path is empty. Throws a TypeError when `uri` is not a
 * MongoDB connection string.
 */
export function databaseNameFromUri(uri: string): string {
  const match = /^mongodb(?:\+srv)?:\/\/[^/?]*(?:\/([^?]*))?/.exec(uri);
  if (!match) throw new TypeError('not a MongoDB connection string (expected mongodb:// or mongodb+srv://)');
  return match[1] ? decodeURIComponent(match[1]) : DEFAULT_DATABASE_NAME;
}
