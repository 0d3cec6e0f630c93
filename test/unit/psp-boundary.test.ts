import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { applyBcbErrata } from '../../src/psp/bcb/errata.js';
import { errorForStatus } from '../../src/psp/errors.js';
import { centavosOf, valorOf } from '../../src/psp/valor.js';
import { projectRoot } from '../../src/project-root.js';

const bcbDocument = () =>
  parse(readFileSync(join(projectRoot, 'src/psp/bcb/openapi.yaml'), 'utf8')) as {
    components: { schemas: Record<string, { required?: string[] }> };
  };

describe('PSP boundary: the hard small parts', () => {
  it('converts centavos to and from the API Pix’s valor on the digits', () => {
    expect(valorOf(0)).toBe('0.00');
    expect(valorOf(5)).toBe('0.05');
    expect(valorOf(123_45)).toBe('123.45');
    expect(valorOf(9_999_999_999_99)).toBe('9999999999.99');
    expect(() => valorOf(1_000_000_000_000)).toThrow(RangeError);
    expect(() => valorOf(1.5)).toThrow(RangeError);
    expect(() => valorOf(-1)).toThrow(RangeError);
    expect(centavosOf('0.10')).toBe(10);
    expect(centavosOf('9999999999.99')).toBe(9_999_999_999_99);
    for (const bad of ['1', '1.5', '1.234', '-1.00', '1,00', ' 1.00', '12345678901.00'])
      expect(() => centavosOf(bad), bad).toThrow(RangeError);
  });

  it('corrects the BCB document’s errata in a parsed copy, and says when one no longer applies', () => {
    const document = applyBcbErrata(bcbDocument());
    const schemas = document.components.schemas;
    expect(schemas.PixConsultados?.required).toEqual(['parametros', 'pix']);
    expect(schemas.CobVGerada?.required).not.toContain('location');
    expect(schemas.DadosRecebedor?.required).toBeUndefined();
    expect(JSON.stringify(document)).not.toMatch(/"pattern":"\/\^/);
    // A new release that fixed them: the list must be revisited, not silently skipped.
    expect(() => applyBcbErrata(document)).toThrow(/erratum no longer applies/);
  });

  it('sorts the PSP’s answers into retryable and final failures', () => {
    expect([500, 502, 503, 504, 408, 429].map((s) => errorForStatus(s, 'PSP').retryable)).toEqual(
      Array(6).fill(true),
    );
    expect([400, 401, 403, 404, 409, 422].map((s) => errorForStatus(s, 'PSP').code)).toEqual([
      'rejected',
      'unauthorized',
      'forbidden',
      'not_found',
      'conflict',
      'rejected',
    ]);
    const refused = errorForStatus(400, 'PSP PUT /cob', {
      type: 'https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida',
      title: 'Requisição inválida',
      status: 400,
      violacoes: [{ razao: 'zero', propriedade: 'cob.valor.original' }],
    });
    expect(refused).toMatchObject({ retryable: false, status: 400 });
    expect(refused.message).toContain('cob.valor.original: zero');
  });
});
