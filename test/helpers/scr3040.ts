import { readFileSync } from 'node:fs';
import { validateXML } from 'xmllint-wasm';

const schema = readFileSync(new URL('../../docs/regulatory/scr3040.xsd', import.meta.url), 'utf8');

/**
 * libxml2's verdict on Documentos 3040 against the subset's schema, in one run (each run starts a
 * WebAssembly worker): each document's errors, in order (none: valid).
 */
export async function scr3040SchemaErrorsOf(documents: string[]): Promise<string[][]> {
  const names = documents.map((_, k) => `doc3040-${k}.xml`);
  const result = await validateXML({
    xml: documents.map((contents, k) => ({ fileName: names[k]!, contents })),
    schema: [{ fileName: 'scr3040.xsd', contents: schema }],
  });
  return names.map((name) =>
    result.errors
      .filter((error) => error.loc?.fileName === name || error.rawMessage.startsWith(name))
      .map((error) => error.rawMessage),
  );
}

/** One document's errors against the subset's schema (none: valid). */
export const scr3040SchemaErrors = async (xml: string): Promise<string[]> =>
  (await scr3040SchemaErrorsOf([xml]))[0]!;
