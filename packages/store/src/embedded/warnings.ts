/**
 * Where the embedded store reports what an operator should know but that is no error of the
 * call at hand: a torn journal tail dropped at start, a failed compaction, a legacy lock file
 * removed, a lost data-directory lock.
 */

/** Receives one human-readable warning (a full sentence naming the file concerned). */
export type WarningSink = (message: string) => void;

/** The default sink: `process.emitWarning`, which Node prints on stderr as `(node:<pid>) Warning: ...`. */
export const processWarning: WarningSink = (message) => process.emitWarning(message);
