/**
 * The bound on what a node may output (issue "Reliability" item 5): every output is stored on
 * its node run and shown by the API, so none may be larger than `SWITCHYARD_MAX_OUTPUT_BYTES`
 * (bytes of its JSON text). A step whose executor returns more fails its attempt without retry
 * (the same call would return as much again); a loop or parallel node, whose output gathers its
 * children's, fails the same way when the gathered output is over the limit.
 */
import { jsonByteLength } from '@switchyard/domain';

/** Default of `SWITCHYARD_MAX_OUTPUT_BYTES`: 1 MiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/** Size check of one output. */
export interface OutputSize {
  /** Bytes of the output's JSON text. */
  bytes: number;
  /** Why the output cannot be kept, or null when it is within `limit`. */
  problem: string | null;
}

/** Measures `output` against `limit` (bytes). */
export function checkOutputSize(output: unknown, limit: number): OutputSize {
  const bytes = jsonByteLength(output);
  return { bytes, problem: bytes > limit ? `output too large: ${bytes} bytes of JSON, over the limit of ${limit} (SWITCHYARD_MAX_OUTPUT_BYTES)` : null };
}
