/**
 * Validation of tool arguments against a tool's `inputSchema` (JSON Schema) with ajv, before the
 * tool is called. Draft 2020-12 and 2019-09 schemas get the matching ajv dialect; anything else
 * (draft-07, the default of MCP SDK 1.x servers, or no `$schema`) is checked as draft-07.
 */
import { Ajv } from 'ajv';
import type { ErrorObject, Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

/** One way the arguments violate the schema: JSON pointer into the arguments, and what is wrong. */
export interface ArgumentProblem {
  /** JSON pointer of the offending value, `""` for the arguments object itself. */
  path: string;
  message: string;
}

/** Checks arguments; returns their problems, `[]` when they are valid. */
export type ArgumentValidator = (args: Record<string, unknown>) => ArgumentProblem[];

/**
 * Compiles tool input schemas into {@link ArgumentValidator}s. ajv keeps every schema it compiled,
 * so use one compiler per tool list (per MCP connection) and drop it with the connection. Compiling
 * costs about 0.2 ms per schema plus a few ms per dialect used; keep the validators.
 */
export class ArgumentValidatorCompiler {
  readonly #dialects = new Map<Dialect, Ajv>();

  /**
   * Compiles one tool's `inputSchema`.
   * @throws Error when the schema is not a valid JSON Schema (ajv's compile error).
   */
  compile(inputSchema: Record<string, unknown>): ArgumentValidator {
    const marker = typeof inputSchema['$schema'] === 'string' ? inputSchema['$schema'] : '';
    const dialect: Dialect = marker.includes('2020-12') ? '2020-12' : marker.includes('2019-09') ? '2019-09' : 'draft-07';
    // Older or unknown meta-schema URIs (draft-04, draft-06) would make draft-07 ajv throw: drop them.
    const { $schema: _marker, ...schema } = inputSchema;
    const validate = this.#ajv(dialect).compile(dialect === 'draft-07' ? schema : inputSchema);
    return (args) => (validate(args) ? [] : (validate.errors ?? []).map(toProblem));
  }

  #ajv(dialect: Dialect): Ajv {
    let ajv = this.#dialects.get(dialect);
    if (ajv === undefined) {
      ajv = DIALECTS[dialect](OPTIONS);
      // ajv-formats is CommonJS: under NodeNext its default import is the module; `.default` is the plugin.
      formats.default(ajv);
      this.#dialects.set(dialect, ajv);
    }
    return ajv;
  }
}

/** Problems as one line: `"/a: must be number; /b: is required"`. */
export function formatArgumentProblems(problems: readonly ArgumentProblem[]): string {
  return problems.map((problem) => `${problem.path || '(arguments)'}: ${problem.message}`).join('; ');
}

type Dialect = 'draft-07' | '2019-09' | '2020-12';

// strict: false accepts the vendor keywords servers put in schemas; allErrors reports every problem.
const OPTIONS: Options = { strict: false, allErrors: true };

const DIALECTS: Record<Dialect, (options: Options) => Ajv> = {
  'draft-07': (options) => new Ajv(options),
  '2019-09': (options) => new Ajv2019(options),
  '2020-12': (options) => new Ajv2020(options),
};

function toProblem(error: ErrorObject): ArgumentProblem {
  if (error.keyword === 'required') {
    return { path: `${error.instancePath}/${String(error.params['missingProperty'])}`, message: 'is required' };
  }
  if (error.keyword === 'additionalProperties') {
    return { path: `${error.instancePath}/${String(error.params['additionalProperty'])}`, message: 'is not an allowed property' };
  }
  return { path: error.instancePath, message: error.message ?? `fails "${error.keyword}"` };
}
