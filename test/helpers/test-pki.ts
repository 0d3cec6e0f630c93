import { makePki, type Pki } from '../../src/devstack/pki.js';

export type { Issued } from '../../src/devstack/pki.js';
export type TestPki = Pki;

/** A throwaway PKI for TLS tests, in a temporary folder (src/devstack/pki.ts). */
export const makeTestPki = (): TestPki => makePki();
