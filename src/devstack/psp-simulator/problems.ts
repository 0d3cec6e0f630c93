import type { Violation } from './contract.js';

/** An answer of the simulator: status, JSON body, extra headers. */
export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Run once the answer is sent (a notification that follows it). */
  after?: () => Promise<unknown>;
}

/**
 * The API Pix's error shape (RFC 7807, `Problema`): `type` is
 * `https://pix.bcb.gov.br/api/v2/error/<TipoErro>`, with the document's names for each error.
 */
export const problem = (
  status: number,
  tipo: string,
  title: string,
  detail?: string,
  violacoes?: Violation[],
): Answer => ({
  status,
  body: {
    type: `https://pix.bcb.gov.br/api/v2/error/${tipo}`,
    title,
    status,
    ...(detail === undefined ? {} : { detail }),
    ...(violacoes && violacoes.length > 0 ? { violacoes } : {}),
  },
});

export const notFound = (tipo: string, detail: string) => problem(404, tipo, 'Not Found', detail);

export const invalid = (tipo: string, detail: string, violacoes?: Violation[]) =>
  problem(400, tipo, 'Requisição inválida', detail, violacoes);
