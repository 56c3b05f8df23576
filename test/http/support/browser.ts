/** @module The headless Chromium the browser tests drive: the one npm brings (@sparticuz/chromium), no system browser needed. */
import chromium from '@sparticuz/chromium'
import { chromium as browsers, type Browser } from 'playwright-core'

/** Starts the browser; the caller closes it. Nothing of it goes out to the network on its own. */
export async function openBrowser(): Promise<Browser> {
  return browsers.launch({
    executablePath: await chromium.executablePath(),
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
}
