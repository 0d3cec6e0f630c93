import { chromium, type Browser } from 'playwright-core';
import { chromiumPath } from '../../src/devstack/browser.js';

/** The system's Chromium, headless, with the flags the machine notes advise for root in a closed network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
