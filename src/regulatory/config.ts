/**
 * The SCR's settings (contract §19, Documento 3040's header): the reporting institution's CNPJ and
 * the person answering for the file. Outside development all four are required, so production
 * cannot start without being able to report; in development and tests the export answers 409
 * `scr_not_configured` until they are set.
 */
import { z } from 'zod';
import { normalizeCnpj } from '../domain/customers/tax-ids.js';
import type { Institution } from '../domain/regulatory/scr3040.js';

export const scrSettings = {
  SCR_INSTITUTION_CNPJ: z
    .string()
    .regex(/^\d{14}$/, 'expected 14 digits')
    .refine((value) => normalizeCnpj(value) === value, 'check digits do not match')
    .optional(),
  SCR_RESPONSIBLE_NAME: z.string().trim().min(1).max(200).optional(),
  SCR_RESPONSIBLE_EMAIL: z.email().max(254).optional(),
  SCR_RESPONSIBLE_PHONE: z
    .string()
    .regex(/^\d{10,11}$/, 'expected the area code and number, 10 or 11 digits')
    .optional(),
};

const names = Object.keys(scrSettings) as (keyof typeof scrSettings)[];

/** Outside development: every SCR setting is said (the export is a monthly legal duty). */
export const scrRules = (env: NodeJS.ProcessEnv): string[] =>
  names
    .filter((name) => !env[name]?.trim())
    .map(
      (name) =>
        `${name}: required outside development (the Banco Central's monthly SCR 3040 header names it)`,
    );

/** The institution of the 3040's header; null while any setting is unset (development only). */
export function scrInstitutionOf(e: {
  [K in keyof typeof scrSettings]?: string | undefined;
}): Institution | null {
  const {
    SCR_INSTITUTION_CNPJ: cnpj,
    SCR_RESPONSIBLE_NAME: responsibleName,
    SCR_RESPONSIBLE_EMAIL: responsibleEmail,
    SCR_RESPONSIBLE_PHONE: responsiblePhone,
  } = e;
  return cnpj && responsibleName && responsibleEmail && responsiblePhone
    ? Object.freeze({ cnpj, responsibleName, responsibleEmail, responsiblePhone })
    : null;
}
