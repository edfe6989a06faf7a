/** The message of a thrown value: `error.message` for Errors, its string form otherwise. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
