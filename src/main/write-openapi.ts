/**
 * Writes the partner, ops and PSP OpenAPI documents to a folder, for `npm run check` to lint with
 * Spectral. The app is built with connections that are never dialled: only its routes are read.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { documentApp } from './document-app.js';

const outDir = process.argv[2] ?? 'dist/openapi';
const app = documentApp();
await mkdir(outDir, { recursive: true });
await writeFile(join(outDir, 'partner.json'), JSON.stringify(app.partnerDocument(), null, 2));
await writeFile(join(outDir, 'ops.json'), JSON.stringify(app.opsDocument(), null, 2));
await writeFile(join(outDir, 'psp.json'), JSON.stringify(app.pspDocument(), null, 2));
await app.dispose();
console.log(`OpenAPI documents written to ${outDir}: partner.json, ops.json and psp.json`);
