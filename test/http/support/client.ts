/**
 * The HTTP suite's client: its `test` (Playwright's, with every test calling from a network of its
 * own, a `newClient` fixture and a `privateServer` fixture), the sandbox's paths and request bodies,
 * a plain node:http `call` for what Playwright's client cannot do (one connection per call, a cookie
 * carried by hand to another server), and the assertions every answer must pass: `expectOk` and
 * `expectError` take an answer of any transport (Playwright's, `call`'s, a raw socket's, raw.ts).
 */
import { test as base, expect, type APIRequestContext, type APIResponse } from '@playwright/test'
import { randomInt } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import type { Runtime } from '../../support/launch'
import { ERRORS } from '../../../src/errors'
import { ROOT, currentTarget, removeDatabase, scratchDatabase, startServer, type RunningServer } from './server'
import { expectedMode } from './targets'
import { LEAK_PATTERNS } from '../../support/leaks'

export { expect }
export { TooSlow, before, sleep, withTimeSpans } from '../../support/wait'

// ---------------------------------------------------------------------------------------------
// Paths, networks and bodies

export const API = {
  session: '/api/sandbox/session',
  search: '/api/sandbox/plans/search',
  issue: '/api/sandbox/policy/new',
  webhook: '/api/sandbox/webhook',
  modify: (policyRef: string) => `/api/sandbox/policy/${encodeURIComponent(policyRef)}/modify`,
  cancel: (policyRef: string) => `/api/sandbox/policy/${encodeURIComponent(policyRef)}/cancel`,
  read: (policyRef: string) => `/api/sandbox/policy/${encodeURIComponent(policyRef)}/read`,
  certificate: (policyRef: string) => `/api/sandbox/policy/${encodeURIComponent(policyRef)}/documents/policy_certificate`,
}

/**
 * A network no other test uses: a random IPv6 /64 from the documentation prefix (2001:db8::/32).
 * Not a random IPv4 test address (198.18.0.0/15): among a few hundred tests on one server, two
 * drew the same one, and a test saw another's calls in its allowance (plan search, deno, 2026-11-25).
 */
export function uniqueNetwork(host = 1): string {
  const group = () => randomInt(0x10000).toString(16)
  return `2001:db8:${group()}:${group()}::${host.toString(16)}`
}

/** A trip that starts `offsetDays` from today (UTC) and lasts `days` days. */
export function tripFrom(offsetDays: number, days: number, origin = 'IN', destination = 'FR') {
  const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10)
  return { origin_country: origin, destination_country: destination, start_date: day(offsetDays), end_date: day(offsetDays + days) }
}

export type Trip = ReturnType<typeof tripFrom>

/** A calendar date `days` after `date` (both `YYYY-MM-DD`, UTC). */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

export const ages = (...values: number[]) => values.map((age) => ({ age }))

export function searchBody(trip: Trip = tripFrom(7, 10), travellers = ages(30), currency?: string) {
  return currency === undefined ? { trip, travellers } : { trip, travellers, currency }
}

/** A body sent byte for byte (Playwright would JSON-encode a string that is not valid JSON). */
export const raw = (text: string) => Buffer.from(text, 'utf8')

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

// ---------------------------------------------------------------------------------------------
// A call over a connection of its own

export interface Reply {
  status: number
  headers: Headers
  text: string
  /** The parsed body, or undefined when it is not JSON. */
  json: any
  /** The `sbx_session` value a response sets ('' when it clears it). */
  token: string | undefined
  setCookies: string[]
}

export interface CallOptions {
  /** A JSON body; a string or Buffer is sent as is (with Content-Type: application/json). */
  body?: unknown
  /** The `sbx_session` token to present. */
  cookie?: string
  /** X-Forwarded-For (the test servers trust one proxy hop). */
  network?: string
  headers?: Record<string, string>
  method?: string
  timeoutMs?: number
}

/**
 * One call over a connection of its own (node:http, no keep-alive pool: a pooled connection the
 * server has just closed would fail for reasons that are not the test's). Rejects only when no HTTP
 * answer arrives (connection refused or reset, or the deadline).
 */
export function call(baseUrl: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | Buffer | undefined
  if (options.body !== undefined) {
    body = typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
    headers['content-length'] = String(Buffer.byteLength(body))
  }
  if (options.cookie !== undefined) headers.cookie = `sbx_session=${options.cookie}`
  if (options.network !== undefined) headers['x-forwarded-for'] = options.network
  const timeoutMs = options.timeoutMs ?? 15_000
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${baseUrl}${path}`, { method: options.method ?? 'POST', headers, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        const responseHeaders = new Headers()
        for (let index = 0; index < response.rawHeaders.length; index += 2) {
          responseHeaders.append(response.rawHeaders[index]!, response.rawHeaders[index + 1]!)
        }
        const setCookies = responseHeaders.getSetCookie()
        const token = setCookies.map((line) => /^sbx_session=([^;]*)/.exec(line)?.[1]).find((value) => value !== undefined)
        resolve({ status: response.statusCode!, headers: responseHeaders, text, json: parseJson(text), token, setCookies })
      })
    })
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    request.on('error', reject)
    request.end(body)
  })
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * Over `call`: a session opened on `sessionUrl` from a network of its own, and the plans of a search
 * for `body` in it on `searchUrl` (another process on the same store, or the same server).
 */
export async function openSession(sessionUrl: string, searchUrl = sessionUrl, body: { trip: Trip; travellers: { age: number }[] } = searchBody()) {
  const network = uniqueNetwork()
  const opened = await call(sessionUrl, API.session, { network })
  await expectOk(opened)
  const cookie = opened.token!
  const plans = (await expectOk(await call(searchUrl, API.search, { body, cookie, network }))).data.plans
  return { network, cookie, body, plans }
}

// ---------------------------------------------------------------------------------------------
// Assertions on an answer of any transport

/** An HTTP answer as a raw socket gives it (raw.ts): header names lower-cased. */
export interface HttpAnswer {
  status: number
  headers: Record<string, string>
  text: string
}

/** An answer whose body is already read: `call`'s or a raw socket's. */
export type ReadAnswer = Reply | HttpAnswer
/** An answer of any transport, Playwright's included. */
export type AnyAnswer = APIResponse | ReadAnswer

/** What the checks read of an answer. */
interface Answer {
  status: number
  header(name: string): string | undefined
  text: string
}

function readAnswer(answer: ReadAnswer): Answer {
  const header =
    answer.headers instanceof Headers
      ? (name: string) => (answer.headers as Headers).get(name) ?? undefined
      : (name: string) => (answer.headers as Record<string, string>)[name]
  return { status: answer.status, header, text: answer.text }
}

async function anyAnswer(answer: AnyAnswer): Promise<Answer> {
  if (typeof (answer as APIResponse).text !== 'function') return readAnswer(answer as ReadAnswer)
  const response = answer as APIResponse
  return { status: response.status(), header: (name) => response.headers()[name], text: await response.text() }
}

export type ErrorObject = { code: string; message: string; details?: { field: string; issue: string }[] }

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

export { LEAK_PATTERNS }

type Check = (ok: boolean, what: string) => void

/** The envelope's common part, the headers every sandbox answer carries, and no leak. */
function envelopeChecks(answer: Answer, body: any, check: Check) {
  check(body.mode === expectedMode(currentTarget()), `mode ${expectedMode(currentTarget())}`)
  check(/^req_[0-9a-f]+$/.test(body.request_id), 'request_id req_<hex>')
  check(answer.header('x-request-id') === body.request_id, 'X-Request-Id equals request_id')
  check(body.meta?.sandbox === true, 'meta.sandbox true')
  const rate = body.meta?.rate_limit
  check(typeof rate?.limit === 'number', 'meta.rate_limit present')
  check(ISO_UTC.test(rate?.reset_at), 'meta.rate_limit.reset_at an ISO time')
  check(answer.header('cache-control') === 'no-store', 'Cache-Control: no-store')
  check(answer.header('x-content-type-options') === 'nosniff', 'X-Content-Type-Options: nosniff')
  check(answer.header('content-type') === 'application/json', 'Content-Type: application/json')
  const remaining = /^"sandbox";r=(\d+);t=\d+$/.exec(answer.header('ratelimit') ?? '')?.[1]
  check(remaining !== undefined && Number(remaining) === rate?.remaining, 'RateLimit "sandbox";r=<meta.rate_limit.remaining>;t=<seconds>')
  check(new RegExp(`^"sandbox";q=${rate?.limit};w=\\d+$`).test(answer.header('ratelimit-policy') ?? ''), 'RateLimit-Policy "sandbox";q=<limit>;w=<seconds>')
  for (const pattern of LEAK_PATTERNS) check(!pattern.test(answer.text), `nothing matching ${pattern}`)
}

/** Runs checks on an answer's JSON body; answers what failed, each with the answer shown. */
function problemsOf(answer: Answer, checks: (body: any, check: Check) => void): string[] {
  const problems: string[] = []
  const where = `HTTP ${answer.status}: ${answer.text.slice(0, 300)}`
  const body = parseJson(answer.text)
  if (body === null || typeof body !== 'object') return [`not an envelope: ${where}`]
  checks(body, (ok, what) => void (ok || problems.push(`${what} (${where})`)))
  return problems
}

function errorChecks(answer: Answer, status: number, code: string) {
  return (body: any, check: Check) => {
    check(body.ok === false, 'ok is false')
    check(Object.keys(body).sort().join() === 'error,meta,mode,ok,request_id', 'exactly ok, mode, request_id, error, meta')
    envelopeChecks(answer, body, check)
    const error = body.error ?? {}
    check(answer.status === status, `status ${status}`)
    check(error.code === code, `code ${code}`)
    check(Object.hasOwn(ERRORS, error.code) && ERRORS[error.code as keyof typeof ERRORS].status === answer.status, 'a contract code with its own HTTP status')
    check(
      Object.keys(error).every((key) => ['code', 'message', 'details'].includes(key)),
      'error has only code, message, details',
    )
    check(typeof error.message === 'string' && error.message.length > 0, 'a message')
    if (error.details !== undefined) {
      const details = Array.isArray(error.details) ? error.details : []
      check(details.length > 0, 'details, when present, not empty')
      for (const detail of details) {
        check(
          Object.keys(detail).sort().join() === 'field,issue' && typeof detail.field === 'string' && typeof detail.issue === 'string',
          'each detail a field and an issue',
        )
      }
    }
  }
}

/**
 * What is wrong with an answer that should be the error envelope with this status and code (spec
 * 2.1, CONTRACT "Envelope and errors"): its fields, the headers every answer carries, and nothing
 * leaked. Plain checks, no `expect` (Playwright's is slow when called thousands of times); empty
 * when all is well.
 */
export function errorProblems(answer: ReadAnswer, status: number, code: string): string[] {
  const read = readAnswer(answer)
  return problemsOf(read, errorChecks(read, status, code))
}

/** Asserts the error envelope with this status and code (see `errorProblems`); answers its `error`. */
export async function expectError(answer: AnyAnswer, status: number, code: string): Promise<ErrorObject> {
  const read = await anyAnswer(answer)
  expect(problemsOf(read, errorChecks(read, status, code))).toEqual([])
  return JSON.parse(read.text).error
}

/** What is wrong with an answer that should be a 200 success envelope (see `errorProblems`). */
export function okProblems(answer: ReadAnswer): string[] {
  const read = readAnswer(answer)
  return problemsOf(read, okChecks(read))
}

function okChecks(answer: Answer) {
  return (body: any, check: Check) => {
    check(answer.status === 200, 'status 200')
    check(body.ok === true, 'ok is true')
    check(Object.keys(body).sort().join() === 'data,meta,mode,ok,request_id', 'exactly ok, mode, request_id, data, meta')
    envelopeChecks(answer, body, check)
    check(ISO_UTC.test(body.meta?.session_expires_at), 'meta.session_expires_at an ISO time')
  }
}

/** Asserts a 200 success envelope (see `okProblems`); answers the whole body. */
export async function expectOk(answer: AnyAnswer): Promise<any> {
  const read = await anyAnswer(answer)
  expect(problemsOf(read, okChecks(read))).toEqual([])
  return JSON.parse(read.text)
}

/** The fields named in `error.details`. */
export const fieldsOf = (error: ErrorObject) => (error.details ?? []).map((detail) => detail.field)

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

/** The `sbx_session` cookie line a response sets, or undefined. */
export function sessionCookie(response: APIResponse): string | undefined {
  const header = response.headersArray().find((h) => h.name.toLowerCase() === 'set-cookie' && h.value.startsWith('sbx_session='))
  return header?.value
}
/** The `sbx_session` token a response sets, or undefined. */
export function sessionToken(response: APIResponse): string | undefined {
  return /^sbx_session=([^;]*)/.exec(sessionCookie(response) ?? '')?.[1]
}

// ---------------------------------------------------------------------------------------------
// Flows

/** Searches and answers the plans; the client keeps the session cookie. */
export async function searchPlans(client: APIRequestContext, body: ReturnType<typeof searchBody>) {
  return (await expectOk(await client.post(API.search, { data: body }))).data
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
  const policy = (await expectOk(await client.post(API.issue, { data: body }))).data
  return { trip, travellers, plan, policy, body }
}

// ---------------------------------------------------------------------------------------------
// The suite's `test`

interface ClientOptions {
  network?: string
  baseURL?: string
}

export type PrivateServer = RunningServer & { dbPath: string }

export const test = base.extend<
  {
    network: string
    /** A new API client with an empty cookie jar, calling from its own network (or the one given). */
    newClient: (options?: ClientOptions) => Promise<APIRequestContext>
    /**
     * Starts a server of the project's target (or of `runtime`) with this configuration (and `args`), on a
     * scratch database named after `name` (or on `dbPath`: a restart, a second process on one
     * database); killed, and its database files removed, when the test ends.
     */
    privateServer: (name: string, env?: Record<string, string>, options?: { dbPath?: string; runtime?: Runtime; args?: string[] }) => Promise<PrivateServer>
  },
  { target: void }
>({
  // Servers a test starts itself run the same target as the project (see server.ts).
  target: [
    async ({}, use, workerInfo) => {
      process.env.SANDBOX_TARGET = workerInfo.project.name
      await use()
    },
    { scope: 'worker', auto: true },
  ],
  // Every test calls from a network of its own (X-Forwarded-For, trusted by the test servers), so
  // that per-network allowances never collide.
  network: async ({}, use) => use(uniqueNetwork()),
  extraHTTPHeaders: async ({ network }, use) => use({ 'x-forwarded-for': network }),
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
  privateServer: async ({}, use) => {
    // Starts still under way count too: a test that fails while one starts must not leave it running.
    const starting: Promise<PrivateServer>[] = []
    await use((name, env = {}, options = {}) => {
      const dbPath = options.dbPath ?? scratchDatabase(name)
      const server = startServer({ SANDBOX_DB_PATH: dbPath, ...env }, options.runtime, options.args).then((started) => ({ ...started, dbPath }))
      starting.push(server)
      return server
    })
    const started = (await Promise.allSettled(starting)).flatMap((start) => (start.status === 'fulfilled' ? [start.value] : []))
    await Promise.all(started.map((server) => server.stop('SIGKILL')))
    for (const dbPath of new Set(started.map((server) => server.dbPath))) removeDatabase(dbPath)
  },
})
