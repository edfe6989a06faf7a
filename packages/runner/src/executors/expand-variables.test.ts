import { describe, expect, it } from 'vitest';
import { expandVariables } from './expand-variables.ts';

const variables = { HOST: 'example.org', EMPTY: '', UNSET: undefined };

describe('expandVariables', () => {
  it('replaces ${NAME} and keeps other text, including a lone $', () => {
    expect(expandVariables('https://${HOST}/a$b', variables)).toEqual({
      ok: true,
      value: 'https://example.org/a$b',
      substitutions: [{ name: 'HOST', value: 'example.org' }],
    });
    expect(expandVariables('[${EMPTY}]', variables)).toEqual({ ok: true, value: '[]', substitutions: [{ name: 'EMPTY', value: '' }] });
    expect(expandVariables('no references', variables)).toEqual({ ok: true, value: 'no references', substitutions: [] });
  });

  it('uses the default of ${NAME:-default} when NAME is unset or empty, listing only variables as substituted', () => {
    expect(expandVariables('${UNSET:-x}|${EMPTY:-y}|${HOST:-z}|${UNSET:-}', variables)).toEqual({
      ok: true,
      value: 'x|y|example.org|',
      substitutions: [{ name: 'HOST', value: 'example.org' }],
    });
    expect(expandVariables('${UNSET:-a:-b c}', variables)).toEqual({ ok: true, value: 'a:-b c', substitutions: [] });
  });

  it('reports every unset variable and malformed reference', () => {
    expect(expandVariables('${UNSET}/${1X}/${}/${OTHER}', variables)).toEqual({
      ok: false,
      problems: [
        'environment variable UNSET is not set (write ${UNSET:-default} to allow a default)',
        'malformed variable reference "${1X}" (expected ${NAME}, ${env:NAME} or ${NAME:-default})',
        'malformed variable reference "${}" (expected ${NAME}, ${env:NAME} or ${NAME:-default})',
        'environment variable OTHER is not set (write ${OTHER:-default} to allow a default)',
      ],
    });
  });

  it('looks ${env:NAME} up in the environment only, naming the substitution env:NAME', () => {
    const environment = { TOKEN: 'from-env', EMPTY: '' };
    const builtins = { ...environment, REGISTRY_DIR: '/registry' };
    expect(expandVariables('Bearer ${env:TOKEN}|${env:EMPTY:-d}|${env:UNSET:-x}', builtins, environment)).toEqual({
      ok: true,
      value: 'Bearer from-env|d|x',
      substitutions: [{ name: 'env:TOKEN', value: 'from-env' }],
    });
    expect(expandVariables('${env:REGISTRY_DIR}/${env:}', builtins, environment)).toEqual({
      ok: false,
      problems: [
        'environment variable REGISTRY_DIR is not set (write ${env:REGISTRY_DIR:-default} to allow a default)',
        'malformed variable reference "${env:}" (expected ${NAME}, ${env:NAME} or ${NAME:-default})',
      ],
    });
    // Without a separate environment, the variables are it.
    expect(expandVariables('${env:HOST}', variables)).toEqual({ ok: true, value: 'example.org', substitutions: [{ name: 'env:HOST', value: 'example.org' }] });
  });

  it('reports an unclosed reference', () => {
    expect(expandVariables('a${HOST', variables)).toEqual({ ok: false, problems: ['unclosed variable reference "${HOST"'] });
  });
});
