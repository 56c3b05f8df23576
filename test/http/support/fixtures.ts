/**
 * The HTTP suite's `test`: Playwright's own, with every test calling from a network of its own
 * (X-Forwarded-For, trusted by the test servers) so that per-network allowances never collide.
 */
import { test as base, expect, type APIResponse } from '@playwright/test'
import { randomInt } from 'node:crypto'
import { currentTarget } from './server'
import { expectedMode } from './targets'

/** A random address from 198.18.0.0/15, the range set aside for benchmarks and tests. */
export function testNetwork(): string {
  return `198.${18 + randomInt(2)}.${randomInt(256)}.${randomInt(1, 255)}`
}

export const test = base.extend<{ network: string }, { target: void }>({
  // Servers a test starts itself run the same target as the project (see server.ts).
  target: [async ({}, use, workerInfo) => {
    process.env.SANDBOX_TARGET = workerInfo.project.name
    await use()
  }, { scope: 'worker', auto: true }],
  network: async ({}, use) => use(testNetwork()),
  extraHTTPHeaders: async ({ network }, use) => use({ 'x-forwarded-for': network }),
})

export { expect }

/** A trip that starts `offsetDays` from today (UTC) and lasts `days` days. */
export function tripFrom(offsetDays: number, days: number, origin = 'IN', destination = 'FR') {
  const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10)
  return { origin_country: origin, destination_country: destination, start_date: day(offsetDays), end_date: day(offsetDays + days) }
}

/** Asserts the contract's envelope and answers its body. */
export async function envelope(response: APIResponse) {
  const body = await response.json()
  expect(body.request_id).toMatch(/^req_[0-9a-f]+$/)
  expect(response.headers()['x-request-id']).toBe(body.request_id)
  expect(body.mode).toBe(expectedMode(currentTarget()))
  expect(body.meta.sandbox).toBe(true)
  expect(typeof body.meta.rate_limit.limit).toBe('number')
  return body
}

/** Asserts an error envelope with this code and HTTP status; answers the error object. */
export async function expectError(response: APIResponse, status: number, code: string) {
  const body = await envelope(response)
  expect({ status: response.status(), ok: body.ok, code: body.error?.code }).toEqual({ status, ok: false, code })
  expect(body.data).toBeUndefined()
  return body.error as { code: string; message: string; details?: { field: string; issue: string }[] }
}
