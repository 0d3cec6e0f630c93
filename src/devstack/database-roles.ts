import { migrateDatabase } from '../db/migrate.js';
import { developmentAppUrl } from '../db/roles.js';

/**
 * An embedded PostgreSQL made ready the way production is: migrated as its superuser (the owner),
 * with the development application role created and granted row access. Returns the URL the API
 * and the worker connect with — as that role, so `npm run dev`, `npm run dev:cluster` and the
 * tests prove the service needs no DDL.
 */
export async function migrateForApplication(ownerUrl: string): Promise<string> {
  const appUrl = developmentAppUrl(ownerUrl);
  await migrateDatabase({ ownerUrl, appUrl });
  return appUrl;
}
