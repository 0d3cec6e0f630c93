import { z } from 'zod';
import type { Db } from '../../../db/client.js';
import { productionBookAt } from '../../../db/queries/regulatory.js';
import { businessDate } from '../../../domain/business-date.js';
import { buildDoc3040, type Institution } from '../../../domain/regulatory/scr3040.js';
import { lastDayOfMonth } from '../../../domain/regulatory/scr3040-tables.js';
import { renderDoc3040 } from '../../../domain/regulatory/scr3040-xml.js';
import { ProblemError, problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';

const scr3040Query = z.strictObject({
  data_base: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'expected a month, YYYY-MM')
    .meta({ description: 'The month reported (`DtBase`), `YYYY-MM`: one that has ended.' }),
  remessa: z
    .string()
    .regex(/^[1-9]\d{0,2}$/, 'expected a whole number from 1 to 999')
    .optional()
    .meta({
      description:
        'The header’s `Remessa`: 1 for the month’s first file (default), the next number for each file sent again.',
    }),
});

/**
 * `GET /ops/v1/regulatory/scr3040?data_base=YYYY-MM` (contract §19): the month's Documento 3040,
 * built from the production book at the month's end (`db/queries/regulatory.ts`, the pure rules in
 * `domain/regulatory/`). Every borrower's debt leaves here, so each export is audited, whoever asks.
 */
export function regulatoryRoutes(
  api: ApiRouter,
  deps: { db: Db; clock: () => Date; institution: Institution | null },
): void {
  api.add(
    {
      method: 'get',
      path: '/regulatory/scr3040',
      operationId: 'getScr3040',
      summary: 'The month’s SCR Documento 3040',
      description:
        'The Banco Central’s Documento 3040 (SCR) of a month that has ended, as XML (contract §19; `docs/regulatory/scr3040.md`): one `Cli` per borrower of production loans still owing at the month’s last day, an `Op` per loan with its `Venc` buckets — what it owes that day by days to or past each row’s due date, or written off — summing to its balance, its risk class by days overdue (Res. 2.682) and minimum provision; borrowers owing under R$ 200 in all aggregated (`Agreg`) where their location is known. Validates against `docs/regulatory/scr3040.xsd`. `admin` only; every export is audited. 422 `month_not_ended` for the current month or a later one; 409 `scr_not_configured` while the `SCR_*` settings are unset (development only).',
      tag: 'Regulatory',
      security: 'ops',
      roles: ['admin'],
      auditReads: true,
      query: scr3040Query,
      responses: {
        200: {
          description: 'The Documento 3040 (UTF-8 XML).',
          contentType: 'application/xml',
          schema: z.string(),
        },
      },
      errors: [409],
    },
    async (ctx, { query }) => {
      const dataBase = query.data_base;
      ctx.state.auditDetail = { data_base: dataBase };
      if (dataBase >= businessDate(deps.clock()).slice(0, 7))
        throw problems.validation([
          {
            path: 'query.data_base',
            code: 'month_not_ended',
            message: `${dataBase} has not ended (São Paulo): a month is reported once its last day is over.`,
          },
        ]);
      if (!deps.institution)
        throw new ProblemError(
          'scr_not_configured',
          'Set SCR_INSTITUTION_CNPJ, SCR_RESPONSIBLE_NAME, SCR_RESPONSIBLE_EMAIL and SCR_RESPONSIBLE_PHONE to export the SCR 3040.',
        );
      const monthEnd = lastDayOfMonth(dataBase);
      const doc = buildDoc3040({
        dataBase,
        monthEnd,
        institution: deps.institution,
        remessa: Number(query.remessa ?? '1'),
        clients: await productionBookAt(deps.db, 'production', monthEnd),
      });
      ctx.state.auditDetail = {
        data_base: dataBase,
        clients: doc.totalCli,
        operations: doc.clients.reduce((sum, cli) => sum + cli.operations.length, 0),
      };
      ctx.set('Cache-Control', 'no-store');
      ctx.set(
        'Content-Disposition',
        `attachment; filename="3040_${dataBase.replace('-', '')}_${doc.cnpj}.xml"`,
      );
      ctx.type = 'application/xml; charset=utf-8';
      ctx.body = renderDoc3040(doc);
    },
  );
}
