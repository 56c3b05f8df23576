/**
 * The session console in a real Chromium (issue 35), on every target: a session driven by a separate
 * HTTP client (as a partner's server drives it) shows its policy, its webhook delivery and a 422
 * with its details; the page follows new calls without a reload, shows a hostile
 * `partner_reference` as text, passes axe-core with no serious violation, and reads at a phone's width.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Browser } from 'playwright-core'
import { API, ages, expect, expectError, expectOk, issuePolicy, searchBody, test, tripFrom } from './support/client'
import { openBrowser } from './support/browser'
import { startReceiver, type Receiver } from './support/receiver'

const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>1</script>'
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

let browser: Browser | undefined
let receiver: Receiver | undefined
test.afterEach(async () => {
  await browser?.close()
  await receiver?.close()
  browser = receiver = undefined
})

test('the console shows a session driven elsewhere, follows it, escapes what it shows and is accessible', async ({ request, baseURL }, testInfo) => {
  test.setTimeout(90_000)
  receiver = await startReceiver()
  await expectOk(await request.post(API.webhook, { data: { url: receiver.url } }))
  const { policy } = await issuePolicy(request, { trip: tripFrom(12, 4), travellers: ages(41), partner_reference: HOSTILE })
  await expectError(await request.post(API.search, { data: searchBody(tripFrom(12, 4), ages(300)) }), 422, 'validation_failed')
  const link = (await expectOk(await request.post('/api/sandbox/console'))).data.console_url as string

  browser = await openBrowser()
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } }) // a phone's width
  expect(link.startsWith(`${baseURL}/api/sandbox/console/`)).toBe(true) // opened as it is printed
  const response = await page.goto(link)
  expect(response!.headers()['content-security-policy']).toContain("script-src 'self'")
  await expect(page.locator('#policies tbody tr')).toHaveCount(1)
  await expect(page.locator('#policies')).toContainText(policy.policy_ref)
  await expect(page.locator('#policies')).toContainText(HOSTILE) // as text
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
  await expect(page.locator('#events')).toContainText('delivered', { timeout: 20_000 })
  const failed = page.locator('#calls > li.failed')
  await expect(failed.first()).toContainText('422 validation_failed')
  await expect(failed.first()).toContainText('travellers[0].age')

  // A new call shows up without a reload.
  const calls = page.locator('#calls > li')
  const before = await calls.count()
  await expectError(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date' } }), 422, 'validation_failed')
  await expect(calls).toHaveCount(before + 1, { timeout: 10_000 })
  await expect(calls.first()).toContainText('/modify')

  // Nothing wider than the phone's screen but the tables' own scrolling boxes.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)

  await page.screenshot({ path: testInfo.outputPath('console-phone.png'), fullPage: true })

  // Injected through the debugging protocol: the page's own CSP would refuse an inline script.
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }).axe
    return (await axe.run()).violations.map(({ id, impact }) => ({ id, impact }))
  })
  expect(violations.filter(({ impact }) => impact === 'serious' || impact === 'critical')).toEqual([])
})

test('a console link of no live session says so and stops asking', async ({ baseURL }) => {
  browser = await openBrowser()
  const page = await browser.newPage()
  let reads = 0
  page.on('request', (sent) => void (sent.url().endsWith('/data') && reads++))
  await page.goto(`${baseURL}/api/sandbox/console/${'A'.repeat(43)}`)
  await expect(page.getByRole('status')).toHaveText(/has ended, or the link is not one of a live session/)
  await page.waitForTimeout(2_500) // longer than the page's 2 s between reads
  expect(reads).toBe(1)
})
