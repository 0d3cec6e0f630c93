export * from './partners.js';
export * from './platform.js';
