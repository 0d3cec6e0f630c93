/**
 * Mistakes in Banco Central's API Pix document (v2.9.0) that no PSP could honour, corrected in the
 * parsed copy both the type generator and the PSP simulator read; the file stays verbatim. Each
 * entry says what the document says and why it cannot be meant. Keep the list short: anything
 * that is merely strict stays as written.
 */
interface OpenApiDocument {
  components?: { schemas?: Record<string, { required?: string[] } | undefined> };
}

export const BCB_ERRATA = [
  {
    // `GET /pix` answers PixConsultados, whose `required` names `cobs` (copied from
    // CobsConsultadas) while its only list is `pix`: an answer listing Pix would fail the schema.
    what: 'PixConsultados requires "cobs"; its list is "pix"',
    apply(document: OpenApiDocument) {
      const schema = document.components?.schemas?.PixConsultados;
      if (!schema?.required?.includes('cobs')) return false;
      schema.required = schema.required.map((name) => (name === 'cobs' ? 'pix' : name));
      return true;
    },
  },
  {
    // DadosRecebedor requires logradouro, cidade, uf and cep of the charge itself, beside the same
    // `required` on `recebedor` where those fields are defined; the document's own cobv example
    // (cobResponse4) has them in `recebedor` only.
    what: 'DadosRecebedor requires recebedor’s address fields at the top level',
    apply(document: OpenApiDocument) {
      const schema = document.components?.schemas?.DadosRecebedor;
      if (!schema?.required?.includes('logradouro')) return false;
      delete schema.required;
      return true;
    },
  },
  {
    // CobVGerada requires a top-level `location` it does not define (a cobv's location is
    // `loc.location`); the document's own cobv example (cobResponse4) has none.
    what: 'CobVGerada requires an undefined "location"',
    apply(document: OpenApiDocument) {
      const schema = document.components?.schemas?.CobVGerada;
      if (!schema?.required?.includes('location')) return false;
      schema.required = schema.required.filter((name) => name !== 'location');
      return true;
    },
  },
  {
    // The CPF (and codMun) patterns are written as JavaScript regex literals, "/^\\d{11}$/": as a
    // JSON Schema pattern that demands the slashes, so no real CPF ("12345678909") would match.
    what: 'patterns written as /…/ regex literals',
    apply(document: OpenApiDocument) {
      let fixed = 0;
      const visit = (node: unknown): void => {
        if (Array.isArray(node)) node.forEach(visit);
        else if (node !== null && typeof node === 'object') {
          const record = node as Record<string, unknown>;
          const literal =
            typeof record.pattern === 'string' ? /^\/(.+)\/$/.exec(record.pattern) : null;
          if (literal?.[1]) {
            record.pattern = literal[1];
            fixed += 1;
          }
          Object.values(record).forEach(visit);
        }
      };
      visit(document);
      return fixed > 0;
    },
  },
] as const;

/**
 * Applies every erratum to a parsed copy of the document. Throws when one no longer applies (a new
 * release fixed it, or moved it), so the list is revisited with each new document.
 */
export function applyBcbErrata<T>(document: T): T {
  for (const erratum of BCB_ERRATA)
    if (!erratum.apply(document as OpenApiDocument))
      throw new Error(`API Pix erratum no longer applies: ${erratum.what}`);
  return document;
}
