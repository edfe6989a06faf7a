/**
 * Wording of file-system failures for messages operators read: the errno code with what it means.
 */

const MEANINGS: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EIO: 'input/output error',
  EROFS: 'read-only file system',
  EFBIG: 'file too large',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
};

/** Codes after which writing can succeed again once space is freed. */
const SPACE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/** The errno code of a Node fs error (`'ENOSPC'`), or undefined for other errors. */
export function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** `error` in words: `no space left on device (ENOSPC)` for a known code, else its message. */
export function describeFsError(error: unknown): string {
  const code = errorCode(error);
  const meaning = code === undefined ? undefined : MEANINGS[code];
  if (meaning) return `${meaning} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

/** True when `error` means the disk (or the user's quota) is full. */
export function isOutOfSpace(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && SPACE_CODES.has(code);
}
