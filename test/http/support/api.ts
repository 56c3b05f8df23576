/**
 * Helpers for the HTTP suite on top of fixtures.ts: the sandbox's paths, request bodies, assertions
 * every sandbox response must pass (envelope, security and fair-use headers, a clean error object),
 * and a `test` with two more fixtures: `newClient` (a fresh cookie jar on a network of its own) and
 * `launch` (a server with its own configuration, always stopped when the test ends).
 */
import type { APIRequestContext, APIResponse } from '@playwright/test'
import { randomInt } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { envelope, expect, expectError, test as base, testNetwork, tripFrom } from './fixtures'
import { ROOT, currentTarget, freshDatabasePath, startServer, type RunningServer } from './server'

export { expect, testNetwork, tripFrom }

export const API = {
  session: '/api/sandbox/session',
  search: '/api/sandbox/plans/search',
  issue: '/api/sandbox/policy/new',
  modify: (policyRef: string) => `/api/sandbox/policy/${encodeURIComponent(policyRef)}/modify`,
  cancel: (policyRef: string) => `/api/sandbox/policy/${encodeURIComponent(policyRef)}/cancel`,
  read: (policyRef: string) => `/api/sandbox/policy/${encodeURIComponent(policyRef)}/read`,
  certificate: (policyRef: string) => `/api/sandbox/policy/${encodeURIComponent(policyRef)}/documents/policy_certificate`,
}

export type Trip = ReturnType<typeof tripFrom>
export type ErrorObject = Awaited<ReturnType<typeof expectError>>

/** The plan catalogue the server prices from, to derive expectations instead of hard-coding them. */
export interface CatalogueEntry {
  product: string
  name: string
  tier: string
  scope: 'domestic' | 'international'
  max_age: number
  daily_rate_inr: Record<string, number>
}
export const catalogue = JSON.parse(readFileSync(join(ROOT, 'data', 'catalogue.json'), 'utf8')) as {
  currencies: Record<string, { per_inr: number; minor_unit: number }>
  regions: Record<string, string[]>
  fallback_region: string
  plans: CatalogueEntry[]
}

/** The catalogue entry behind a returned plan (names are the service's own tier names). */
export function definitionOf(plan: { name: string }): CatalogueEntry {
  const found = catalogue.plans.find((entry) => entry.name === plan.name)
  expect(found, `plan name ${plan.name} is in the catalogue`).toBeDefined()
  return found!
}

export const ages = (...values: number[]) => values.map((age) => ({ age }))

export function searchBody(trip: Trip = tripFrom(7, 10), travellers = ages(30), currency?: string) {
  return currency === undefined ? { trip, travellers } : { trip, travellers, currency }
}

/** A calendar date `days` after `date` (both `YYYY-MM-DD`, UTC). */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Headers every sandbox response carries, whatever its status. */
export function expectSandboxHeaders(response: APIResponse, body: { request_id: string; meta: { rate_limit: { remaining: number; limit: number } } }) {
  const headers = response.headers()
  expect(headers['x-request-id']).toBe(body.request_id)
  expect(headers['cache-control']).toBe('no-store')
  expect(headers['x-content-type-options']).toBe('nosniff')
  expect(headers['content-type']).toMatch(/^application\/json/)
  const rate = rateLimitHeader(response)
  expect(rate.remaining).toBe(body.meta.rate_limit.remaining)
  expect(headers['ratelimit-policy']).toMatch(new RegExp(`^"sandbox";q=${body.meta.rate_limit.limit};w=\\d+$`))
}

/** The IETF draft `RateLimit` header: `"sandbox";r=<remaining>;t=<seconds to reset>`. */
export function rateLimitHeader(response: APIResponse): { remaining: number; reset: number } {
  const match = /^"sandbox";r=(\d+);t=(\d+)$/.exec(response.headers()['ratelimit'] ?? '')
  expect(match, `RateLimit header: ${response.headers()['ratelimit']}`).not.toBeNull()
  return { remaining: Number(match![1]), reset: Number(match![2]) }
}

/** The `window` value of `RateLimit-Policy`. */
export function policyWindow(response: APIResponse): number {
  return Number(/;w=(\d+)/.exec(response.headers()['ratelimit-policy'] ?? '')?.[1])
}

/** A 200 success envelope; answers the whole body. */
export async function ok(response: APIResponse) {
  expect(response.status(), await response.text()).toBe(200)
  const body = await envelope(response)
  expect(body.ok).toBe(true)
  expect(Object.keys(body).sort()).toEqual(['data', 'meta', 'mode', 'ok', 'request_id'])
  expect(body.meta.rate_limit.reset_at).toMatch(ISO_UTC)
  expect(body.meta.session_expires_at).toMatch(ISO_UTC)
  expectSandboxHeaders(response, body)
  return body
}

const STACK_OR_PATH = [
  /\n\s*at\s/, // a stack frame
  /\bat\s+\S+\s+\(/, // "at fn (" on one line
  /(?:[A-Za-z]:)?(?:[\\/][\w.@-]+)+\.(?:ts|js|mjs|cjs|tsx)\b/, // a source file path
  /node_modules/,
  /\/(?:work|home|tmp|usr|src)\//,
  /\bstack\b/i,
]

/** An error envelope with this status and code, with no stack trace, file path or foreign field. */
export async function fails(response: APIResponse, status: number, code: string): Promise<ErrorObject> {
  const text = await response.text()
  expect(response.status(), text).toBe(status)
  const error = await expectError(response, status, code)
  const body = JSON.parse(text)
  expect(Object.keys(body).sort()).toEqual(['error', 'meta', 'mode', 'ok', 'request_id'])
  expect(body.meta.rate_limit.reset_at).toMatch(ISO_UTC)
  expect(Object.keys(error).every((key) => ['code', 'message', 'details'].includes(key))).toBe(true)
  expect(typeof error.message).toBe('string')
  expect(error.message.length).toBeGreaterThan(0)
  if (error.details !== undefined) {
    expect(error.details.length).toBeGreaterThan(0)
    for (const detail of error.details) {
      expect(Object.keys(detail).sort()).toEqual(['field', 'issue'])
      expect(typeof detail.field).toBe('string')
      expect(typeof detail.issue).toBe('string')
    }
  }
  for (const pattern of STACK_OR_PATH) expect(text, `error body must not match ${pattern}`).not.toMatch(pattern)
  expectSandboxHeaders(response, body)
  return error
}

/** The fields named in `error.details`. */
export const fieldsOf = (error: ErrorObject) => (error.details ?? []).map((detail) => detail.field)

/** The `sbx_session` token a response sets, or undefined. */
export function sessionCookie(response: APIResponse): string | undefined {
  const header = response.headersArray().find((h) => h.name.toLowerCase() === 'set-cookie' && h.value.startsWith('sbx_session='))
  return header?.value
}
export function sessionToken(response: APIResponse): string | undefined {
  return /^sbx_session=([^;]*)/.exec(sessionCookie(response) ?? '')?.[1]
}

/** Searches and answers the plans; the client keeps the session cookie. */
export async function searchPlans(client: APIRequestContext, body: ReturnType<typeof searchBody>) {
  return (await ok(await client.post(API.search, { data: body }))).data
}

/** Searches, then issues against the first plan (or the one named by product); answers both payloads. */
export async function issuePolicy(
  client: APIRequestContext,
  options: { trip?: Trip; travellers?: { age: number }[]; partner_reference?: string; product?: string } = {},
) {
  const trip = options.trip ?? tripFrom(7, 10)
  const travellers = options.travellers ?? ages(30)
  const search = await searchPlans(client, searchBody(trip, travellers))
  const plan = options.product ? search.plans.find((p: { name: string }) => definitionOf(p).product === options.product) : search.plans[0]
  expect(plan, 'a plan to issue against').toBeDefined()
  const body: Record<string, unknown> = { plan_id: plan.plan_id, trip, travellers }
  if (options.partner_reference !== undefined) body.partner_reference = options.partner_reference
  const policy = (await ok(await client.post(API.issue, { data: body }))).data
  return { trip, travellers, plan, policy, body }
}

/**
 * A network no other test uses: a random IPv6 /64 from the documentation prefix (2001:db8::/32),
 * for tests that spread calls over many networks (random IPv4 test addresses collide too often).
 */
export function uniqueNetwork(host = 1): string {
  const group = () => randomInt(0x10000).toString(16)
  return `2001:db8:${group()}:${group()}::${host.toString(16)}`
}

/** A body sent byte for byte (Playwright would JSON-encode a string that is not valid JSON). */
export const raw = (text: string) => Buffer.from(text, 'utf8')

export { TooSlow, before, sleep, withTimeSpans } from '../../support/wait'

interface ClientOptions {
  network?: string
  baseURL?: string
}

export const test = base.extend<{
  /** A new API client with an empty cookie jar, calling from its own network (or the one given). */
  newClient: (options?: ClientOptions) => Promise<APIRequestContext>
  /**
   * Starts a server of the project's target on a fresh database file named after `name` and the
   * target (the same test runs once per target, possibly at the same time); stopped when the test
   * ends. Pass `dbPath` to start on an existing file (restarts).
   */
  launch: (name: string, env?: Record<string, string>, dbPath?: string) => Promise<RunningServer & { dbPath: string }>
}>({
  newClient: async ({ playwright, baseURL }, use) => {
    const made: APIRequestContext[] = []
    await use(async (options = {}) => {
      const client = await playwright.request.newContext({
        baseURL: options.baseURL ?? baseURL,
        extraHTTPHeaders: { 'x-forwarded-for': options.network ?? uniqueNetwork() },
      })
      made.push(client)
      return client
    })
    await Promise.all(made.map((client) => client.dispose()))
  },
  launch: async ({}, use) => {
    const started: RunningServer[] = []
    try {
      await use(async (name, env = {}, dbPath) => {
        const path = dbPath ?? freshDatabasePath(`${name}-${currentTarget()}`)
        const server = await startServer({ SANDBOX_DB_PATH: path, ...env })
        started.push(server)
        return { ...server, dbPath: path }
      })
    } finally {
      await Promise.all(started.map((server) => server.stop()))
    }
  },
})
