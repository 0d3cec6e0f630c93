import { timestamp } from 'drizzle-orm/pg-core';

/** Every timestamp column: with time zone, millisecond precision (contract §1). */
export const timestampColumn = (name: string) =>
  timestamp(name, { withTimezone: true, precision: 3 });
