// Debian's chromium, driven by playwright-core (no browser download), for the console's browser
// tests: whether it is here (the tests are skipped, loudly, where it is not) and how it is launched.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Whether chromium is installed; when not, says which file's browser tests are skipped and why. */
export function haveChromium(testFile: string): boolean {
  const here = existsSync(CHROMIUM);
  if (!here) {
    console.warn(
      `${testFile}: the browser tests are SKIPPED: ${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)`,
    );
  }
  return here;
}

/** Headless, offline: no first-run, sync, update or background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
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
