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
        'malformed variable reference "${1X}" (expected ${NAME} or ${NAME:-default})',
        'malformed variable reference "${}" (expected ${NAME} or ${NAME:-default})',
        'environment variable OTHER is not set (write ${OTHER:-default} to allow a default)',
      ],
    });
  });

  it('reports an unclosed reference', () => {
    expect(expandVariables('a${HOST', variables)).toEqual({ ok: false, problems: ['unclosed variable reference "${HOST"'] });
  });
});
