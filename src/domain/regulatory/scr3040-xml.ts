/**
 * Writes a `Doc3040` as the layout's XML: attributes only, every value escaped by one function
 * (no value reaches the text unescaped), amounts in reais with two decimals from integer
 * centavos by string work on the digits. The subset it writes is `docs/regulatory/scr3040.xsd`.
 */
import {
  ORIGEM_REC,
  type AggregateReport,
  type ClientReport,
  type Doc3040,
  type OperationReport,
} from './scr3040.js';
import type { BucketCode } from './scr3040-tables.js';

const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

/** An attribute value as XML text: markup characters and the white space a parser folds, escaped. */
export const escapeAttribute = (value: string): string =>
  value.replace(/[&<>"'\t\n\r]/g, (ch) => entities[ch]!);

/** Integer centavos as reais with two decimals: 123456 → "1234.56". */
export function reais(centavos: number): string {
  if (!Number.isSafeInteger(centavos) || centavos < 0)
    throw new RangeError(`not a centavo amount: ${centavos}`);
  const digits = String(centavos).padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

type Attributes = readonly (readonly [string, string | number | null])[];

const attributes = (pairs: Attributes): string =>
  pairs
    .filter((pair): pair is readonly [string, string | number] => pair[1] !== null)
    .map(([name, value]) => ` ${name}="${escapeAttribute(String(value))}"`)
    .join('');

const element = (name: string, pairs: Attributes, children: string[] = [], indent = ''): string =>
  children.length === 0
    ? `${indent}<${name}${attributes(pairs)}/>`
    : `${indent}<${name}${attributes(pairs)}>\n${children.join('\n')}\n${indent}</${name}>`;

const venc = (buckets: readonly [BucketCode, number][], indent: string) =>
  element(
    'Venc',
    buckets.map(([code, centavos]) => [code, reais(centavos)] as const),
    [],
    indent,
  );

function operation(op: OperationReport): string {
  const children = [venc(op.venc, '      ')];
  if (op.assignmentInfo)
    children.push(
      element(
        'Inf',
        [
          ['Tp', op.assignmentInfo.tp],
          ['Cd', op.assignmentInfo.cd],
          ['Ident', op.assignmentInfo.ident],
          ['Perc', op.assignmentInfo.perc],
        ],
        [],
        '      ',
      ),
    );
  return element(
    'Op',
    [
      ['DetCli', op.detCli],
      ['Contrt', op.contrt],
      ['NatuOp', op.natuOp],
      ['Mod', op.mod],
      ['OrigemRec', ORIGEM_REC],
      ['Indx', '11'],
      ['VarCamb', '790'],
      ['DtVencOp', op.dtVencOp],
      ['ClassOp', op.classOp],
      ['CEP', op.cep],
      ['TaxEft', op.taxEft],
      ['DtContr', op.dtContr],
      ['ProvConsttd', reais(op.provConsttd)],
    ],
    children,
    '    ',
  );
}

const client = (cli: ClientReport): string =>
  element(
    'Cli',
    [
      ['Tp', cli.tp],
      ['Cd', cli.cd],
      ['Autorzc', cli.autorzc],
      ['PorteCli', cli.porteCli],
      ['IniRelactCli', cli.iniRelactCli],
      ['ClassCli', cli.classCli],
    ],
    cli.operations.map(operation),
    '  ',
  );

const aggregate = (agg: AggregateReport): string =>
  element(
    'Agreg',
    [
      ['NatuOp', agg.natuOp],
      ['Mod', agg.mod],
      ['OrigemRec', agg.origemRec],
      ['VincME', agg.vincME],
      ['ClassOp', agg.classOp],
      ['FaixaVlr', agg.faixaVlr],
      ['PrzProvm', agg.przProvm],
      ['Localiz', agg.localiz],
      ['TpCli', agg.tpCli],
      ['DesempOp', agg.desempOp],
      ['ProvConsttd', reais(agg.provConsttd)],
      ['QtdOp', agg.qtdOp],
      ['QtdCli', agg.qtdCli],
    ],
    [venc(agg.venc, '    ')],
    '  ',
  );

/** The document as the file the Banco Central receives (UTF-8). */
export function renderDoc3040(doc: Doc3040): string {
  const body = [...doc.clients.map(client), ...doc.aggregates.map(aggregate)];
  return `<?xml version="1.0" encoding="UTF-8"?>\n${element(
    'Doc3040',
    [
      ['DtBase', doc.dtBase],
      ['CNPJ', doc.cnpj],
      ['Remessa', doc.remessa],
      ['Parte', doc.parte],
      ['TpArq', doc.tpArq],
      ['NomeResp', doc.nomeResp],
      ['EmailResp', doc.emailResp],
      ['TelResp', doc.telResp],
      ['TotalCli', doc.totalCli],
    ],
    body,
  )}\n`;
}
