/**
 * Linear-time `map` and `filter`. The parser expands `list.map(x, f)` into a fold whose step is
 * `@result + [f]`, and @bufbuild/cel concatenates lists lazily, so the result of a map over n
 * elements is a chain n levels deep: reading it costs O(n²) and overflows the stack past a few
 * thousand elements. `metering.ts` rewrites that step into `@append(@result, f)`, which appends
 * to one flat list in place.
 *
 * In-place appending is safe because the accumulator of a `map`/`filter` fold starts as the
 * constant `[]` (never a list seen elsewhere), and each step's result is only read by the next
 * step: the list is copied on the first append and mutated only while it is the accumulator.
 */
import { celFunc, celList, CelScalar, isCelList } from '@bufbuild/cel';
import type { CelFunc, CelList } from '@bufbuild/cel';

/** Name of the append function; `@` keeps it out of reach of CEL source. */
export const APPEND = '@append';

/** The arrays behind lists this module built, by list. */
const backing = new WeakMap<CelList, unknown[]>();

/** `@append(list, element)`: `list + [element]`, in place when `list` came from an earlier append. */
export const appendFunction: CelFunc = celFunc(APPEND, [CelScalar.DYN, CelScalar.DYN], CelScalar.DYN, (list, element) => {
  if (!isCelList(list)) throw new Error(`${APPEND} needs a list accumulator`);
  const array = backing.get(list);
  if (array !== undefined) {
    array.push(element);
    return list;
  }
  const fresh = [...list, element];
  const result = celList(fresh);
  backing.set(result, fresh);
  return result;
});
