import { readFileSync } from 'node:fs';
import { validateXML } from 'xmllint-wasm';

const schema = readFileSync(new URL('../../docs/regulatory/scr3040.xsd', import.meta.url), 'utf8');

/** libxml2's verdict on a Documento 3040 against the subset's schema: its errors (none: valid). */
export async function scr3040SchemaErrors(xml: string): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: 'doc3040.xml', contents: xml }],
    schema: [{ fileName: 'scr3040.xsd', contents: schema }],
  });
  return result.valid ? [] : result.errors.map((error) => error.rawMessage);
}
