/**
 * Property-based tests (issue #4, fast-check), in process through `app.handle` with an in-memory
 * database and a fake clock:
 *
 * 1. Arbitrary requests (methods, paths, headers, cookies, JSON and non-JSON bodies, mutations of
 *    valid bodies) against every endpoint: never a 5xx; always a valid envelope (ok, mode,
 *    request_id, meta; error.code from the contract list with its own status); never a stack trace,
 *    file path or driver code; never a rejected value echoed (every generated string carries a
 *    marker that must not appear in an error answer or in any response header).
 * 2. Routing does not depend on the Host the request names.
 * 3. A model-based run (`fc.commands`, `fc.asyncModelRun`) of sessions, search, issue, modify, clock
 *    advances (expiry, the rolling window), sweeps and the rate limit against a simple model of
 *    the contract: status, error code, remaining allowance, reset time, session expiry and
 *    endorsement sequence are predicted for every call.
 *
 * Bounded so that the default run stays within a few seconds; FUZZ_RUNS=<n> multiplies the runs
 * (e.g. FUZZ_RUNS=20 bun test test/unit/fuzz.test.ts), FUZZ_SEED=<n> replays one seed.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { ERRORS, type ErrorCode } from '../../src/errors'
import { createServices } from '../../src/modules/services'
import { withStorage } from './support/storage'
import { START_MS } from './support/app'
import { logLine } from '../../src/log'
import type { Reply } from '../http/support/client'
import { LEAK_PATTERNS } from '../support/leaks'

const SCALE = Math.max(1, Number(process.env.FUZZ_RUNS ?? 1) || 1)
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
const runs = (base: number) => ({ numRuns: base * SCALE, ...(SEED !== undefined && { seed: SEED }) })
const TIMEOUT = 60_000 * SCALE

/** Which answers a run produced (printed on longer runs, to show what the fuzzing reached). */
function tally() {
  const counts = new Map<string, number>()
  return {
    add: (answer: Answer) => {
      const label = `${answer.status} ${answer.json?.error?.code ?? (answer.json?.ok ? 'ok' : '-')}`
      counts.set(label, (counts.get(label) ?? 0) + 1)
    },
    print: (title: string) => {
      if (process.env.FUZZ_RUNS) console.log(title, Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b))))
    },
  }
}
const modelTally = tally()

const MARK = 'QZXMARK'
const DAY = 86_400_000
const day = (ms: number, offset: number) => new Date(ms + offset * DAY).toISOString().slice(0, 10)

/** An in-process app on a fresh in-memory database, with a clock the test moves. */
async function buildApp(env: Record<string, string>) {
  let now = START_MS
  const logs: string[] = []
  const services = createServices({ ...(await withStorage(loadConfig(env))), clock: () => now, log: (fields) => logs.push(logLine(fields)) })
  const app = createApp(services)
  return { app, services, logs, now: () => now, setNow: (ms: number) => void (now = ms) }
}

/** What the HTTP suite's raw client reads of an answer (test/http/support/client.ts). */
type Answer = Omit<Reply, 'setCookies'>

async function send(app: Awaited<ReturnType<typeof buildApp>>['app'], url: string, init: RequestInit): Promise<Answer> {
  const response = await app.handle(new Request(url, init))
  const text = await response.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  const token = response.headers
    .getSetCookie()
    .map((line) => /^sbx_session=([^;]*)/.exec(line)?.[1])
    .find((value) => value !== undefined)
  return { status: response.status, headers: response.headers, text, json, token }
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Everything wrong with an answer that should be the contract's envelope; empty when none. */
function envelopeProblems(answer: Answer): string[] {
  const problems: string[] = []
  const check = (ok: unknown, what: string) => void (ok || problems.push(what))
  const body = answer.json
  if (body === null || typeof body !== 'object') return [`not JSON: ${answer.text.slice(0, 200)}`]
  const keys = Object.keys(body).sort().join()
  check(keys === 'data,meta,mode,ok,request_id' || keys === 'error,meta,mode,ok,request_id', `envelope keys: ${keys}`)
  check(body.mode === 'simulation', `mode ${body.mode}`)
  check(typeof body.request_id === 'string' && /^req_[0-9a-f]+$/.test(body.request_id), 'request_id')
  check(answer.headers.get('x-request-id') === body.request_id, 'X-Request-Id')
  check(body.meta?.sandbox === true, 'meta.sandbox')
  check(body.meta?.session_expires_at === null || ISO.test(body.meta?.session_expires_at), 'meta.session_expires_at')
  const rate = body.meta?.rate_limit
  check(Number.isInteger(rate?.limit) && Number.isInteger(rate?.remaining) && rate.remaining >= 0 && ISO.test(rate?.reset_at), 'meta.rate_limit')
  if (body.ok === true) {
    check(answer.status === 200, `ok with status ${answer.status}`)
    check(body.data !== null && typeof body.data === 'object', 'data object')
  } else {
    check(body.ok === false, 'ok boolean')
    const code = body.error?.code
    check(Object.hasOwn(ERRORS, code), `error.code ${code} in the contract list`)
    check(ERRORS[code as ErrorCode].status === answer.status, `status ${answer.status} for ${code}`)
    check(typeof body.error?.message === 'string' && body.error.message.length > 0, 'error.message')
    const errorKeys = Object.keys(body.error ?? {}).filter((key) => !['code', 'message', 'details'].includes(key))
    check(errorKeys.length === 0, `extra error fields ${errorKeys}`)
    if (body.error?.details !== undefined) {
      check(Array.isArray(body.error.details) && body.error.details.length > 0, 'details non-empty list')
      for (const detail of body.error.details ?? []) {
        check(typeof detail?.field === 'string' && typeof detail?.issue === 'string' && Object.keys(detail).length === 2, 'detail {field, issue}')
      }
    }
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// 1. Arbitrary requests

/** A string carrying the marker: any value generated here that the server refuses must not come back. */
const marked = fc.oneof(
  fc.string({ maxLength: 24 }).map((text) => `${MARK}${text}`),
  fc.string({ maxLength: 8 }).map((text) => `${text}${MARK}`),
  fc.constantFrom(`${MARK}@example.org`, `a.${MARK}@mail.test`, `${MARK} ${MARK}`, `${MARK}\u0000\u00e9\u{1F600}`, `${MARK}"},{"x":"`, `${MARK}\\u0041`),
)
/** Keys never carry the marker: unknown field names are reported as paths, by design. */
const key = fc.oneof(
  fc.constantFrom(
    'trip',
    'travellers',
    'age',
    'currency',
    'plan_id',
    'partner_reference',
    'scenario',
    'new_end_date',
    'destination_country',
    'origin_country',
    'start_date',
    'end_date',
    'email',
    'first_name',
    'Passport No',
    'dob',
    '__proto__',
    'constructor',
    'toString',
    'valueOf',
    'toJSON',
    '',
  ),
  fc.string({ maxLength: 12 }).filter((text) => !text.includes(MARK)),
)
const markedJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    marked,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value

interface Fixtures {
  token: string
  planId: string
  policyRef: string
  search: { trip: Record<string, string>; travellers: { age: number }[]; currency?: string }
}

/** A valid body for the path, with one random change (a value replaced, a field removed or added). */
function mutatedBody(fixtures: Fixtures) {
  const valid = [
    fixtures.search,
    { ...fixtures.search, currency: 'EUR' },
    { plan_id: fixtures.planId, trip: fixtures.search.trip, travellers: fixtures.search.travellers, partner_reference: 'BK-1' },
    { scenario: 'extend_end_date', new_end_date: day(START_MS, 40) },
    { scenario: 'shorten_end_date', new_end_date: day(START_MS, 31) },
    { scenario: 'correct_destination', destination_country: 'DE' },
    { scenario: 'correct_partner_reference', partner_reference: 'BK-2' },
    {},
  ]
  return fc
    .tuple(fc.constantFrom(...valid), fc.array(fc.tuple(fc.nat(), fc.constantFrom('replace', 'remove', 'add'), key, markedJson), { maxLength: 3 }))
    .map(([base, changes]) => {
      const body = structuredClone(base) as Record<string, unknown>
      for (const [pick, change, name, value] of changes) {
        // Walk to a random object inside the body.
        let target: any = body
        for (let depth = 0; depth < 3; depth++) {
          const children = Object.values(target).filter((child) => child !== null && typeof child === 'object')
          if (children.length === 0 || (pick >> depth) % 2 === 0) break
          target = children[(pick >> (depth + 2)) % children.length]
        }
        const keys = Object.keys(target)
        if (change === 'add' || keys.length === 0) target[name] = value
        else if (change === 'remove') delete target[keys[pick % keys.length]!]
        else target[keys[pick % keys.length]!] = value
      }
      return body
    })
}

const SANDBOX_PATHS = ['/api/sandbox/session', '/api/sandbox/plans/search', '/api/sandbox/policy/new']

function requestArbitrary(fixtures: Fixtures) {
  const segment = fc.oneof(
    fc.constantFrom('api', 'sandbox', 'policy', 'plans', 'search', 'new', 'modify', 'session', '..', '.', '', '%2e%2e', '%2F', '%ZZ', '%E0%A4%A', '%00'),
    marked.map(encodeURIComponent),
  )
  const path = fc.oneof(
    {
      weight: 14,
      arbitrary: fc.constantFrom(...SANDBOX_PATHS, `/api/sandbox/policy/${fixtures.policyRef}/modify`, `/api/sandbox/policy/${fixtures.policyRef}/cancel`),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '/api/sandbox/events',
        '/api/sandbox/webhook',
        '/api/sandbox/webhook/test',
        '/api/sandbox/events/evt_00000000000000000000/resend',
      ),
    },
    { weight: 1, arbitrary: marked.map((ref) => `/api/sandbox/events/${encodeURIComponent(ref)}/resend`) },
    { weight: 2, arbitrary: marked.map((ref) => `/api/sandbox/policy/${encodeURIComponent(ref)}/modify`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '/api/sandbox/policy/%ZZ/modify',
        '/api/sandbox/policy/%E0%A4%A/modify',
        '/api/sandbox/policy//modify',
        '/api/sandbox/policy/a/b/modify',
      ),
    },
    { weight: 2, arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => `/api/sandbox/${parts.join('/')}`) },
    { weight: 1, arbitrary: fc.array(segment, { maxLength: 4 }).map((parts) => `/${parts.join('/')}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('/healthz', '/readyz', '/api/sandbox/openapi.json', '/api/sandbox/docs', '/', '/api', '/api/sandbox', '/api/sandbox/'),
    },
  )
  const query = fc.option(
    fc.oneof(
      marked.map((text) => `?q=${encodeURIComponent(text)}`),
      fc.constantFrom('?', '?a=1&a=2', `?${MARK}`),
    ),
    { nil: '' },
  )
  const method = fc.oneof(
    { weight: 8, arbitrary: fc.constant('POST') },
    { weight: 2, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD') },
  )
  const cookie = fc.option(
    fc.oneof(
      fc.constant(`sbx_session=${fixtures.token}`),
      marked.map((text) => `sbx_session=${encodeURIComponent(text)}`),
      marked.map((text) => `other=${encodeURIComponent(text)}; sbx_session=${fixtures.token}`),
      fc.constantFrom('sbx_session=', 'sbx_session', '=;;', `sbx_session=${'a'.repeat(300)}`, `sbx_session=${fixtures.token}; sbx_session=x`),
    ),
    { nil: undefined },
  )
  const headers = fc.record(
    {
      // Mostly JSON, so that requests get past the media-type check (a string body alone is text/plain).
      'content-type': fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/json') },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            'application/json; charset=utf-8',
            'APPLICATION/JSON',
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            '',
          ),
        },
        { weight: 1, arbitrary: marked.map((text) => text.replace(/[^\x20-\x7e]/g, '')) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
      'idempotency-key': fc.option(
        fc.oneof(
          marked.map((text) => text.replace(/[^\x20-\x7e]/g, '')),
          fc.constantFrom('k-1', '', ' ', 'x'.repeat(256), `${MARK}-valid-key`),
        ),
        { nil: undefined },
      ),
      'x-forwarded-for': fc.option(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('garbage', ', ,', '::ffff:1.2.3.4', `${MARK}`)), { nil: undefined }),
      'x-forwarded-proto': fc.option(fc.constantFrom('https', 'http', MARK), { nil: undefined }),
      // Only values that force nothing: a forced 5xx is by request, and the never-a-5xx check stays.
      'sandbox-outcome': fc.option(
        marked.map((text) => text.replace(/[^\x20-\x7e]/g, '')),
        { nil: undefined },
      ),
      cookie,
      [`x-${MARK.toLowerCase()}`]: fc.option(
        marked.map((text) => text.replace(/[^\x20-\x7e]/g, '')),
        { nil: undefined },
      ),
    },
    { requiredKeys: [] },
  )
  const body = fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: mutatedBody(fixtures).map((value) => JSON.stringify(value)) },
    { weight: 3, arbitrary: markedJson.map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 1, arbitrary: marked },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => new Uint8Array([0x7b, ...bytes, 0xff, 0xfe])) },
    { weight: 1, arbitrary: fc.constantFrom('', '{}', '[]', 'null', '""', '0', '{"trip":', '\ufeff{}', '{"a":1}{"b":2}') },
  )
  return fc.record({ method, path, query, headers, body })
}

/** Answers that are not envelopes by design: health checks and the documentation. */
const PLAIN = new Set([
  '/',
  '/api/sandbox',
  '/healthz',
  '/readyz',
  '/api/sandbox/openapi.json',
  '/api/sandbox/docs',
  '/api/sandbox/docs/swagger-ui.css',
  '/api/sandbox/docs/swagger-ui-bundle.js',
])

describe('fuzz: arbitrary requests against every endpoint', () => {
  test(
    'never a 5xx, always the envelope, never a leak, never an echo of a rejected value',
    async () => {
      const sandbox = await buildApp({ SANDBOX_RATE_LIMIT: '1000000000', SANDBOX_TRUST_PROXY: '1' })
      const base = 'http://localhost'
      // A live session with a search and a policy, so that valid references are in reach.
      const search = {
        trip: { origin_country: 'IN', destination_country: 'FR', start_date: day(START_MS, 30), end_date: day(START_MS, 35) },
        travellers: [{ age: 30 }],
      }
      const searched = await send(sandbox.app, `${base}/api/sandbox/plans/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(search),
      })
      const token = searched.token!
      const planId = searched.json.data.plans[0].plan_id
      const issued = await send(sandbox.app, `${base}/api/sandbox/policy/new`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: `sbx_session=${token}` },
        body: JSON.stringify({ plan_id: planId, ...search }),
      })
      const fixtures: Fixtures = { token, planId, policyRef: issued.json.data.policy_ref, search }
      const seen = tally()

      await fc.assert(
        fc.asyncProperty(requestArbitrary(fixtures), async (request) => {
          const headers = Object.fromEntries(Object.entries(request.headers).filter(([, value]) => value !== undefined)) as Record<string, string>
          const hasBody = request.body !== undefined && request.method !== 'GET' && request.method !== 'HEAD'
          const answer = await send(sandbox.app, `${base}${request.path}${request.query}`, {
            method: request.method,
            headers,
            body: hasBody ? request.body : undefined,
          })
          const where = `${request.method} ${request.path}${request.query} -> ${answer.status} ${answer.text.slice(0, 300)}`
          seen.add(answer)
          expect(answer.status, where).toBeLessThan(500)
          for (const [name, value] of answer.headers) expect(value.includes(MARK), `${where}: header ${name} echoes a sent value`).toBe(false)
          // The path as the URL standard reads it: `/api/sandbox/%2e%2e/sandbox` is the front door `/api/sandbox`.
          const plain = PLAIN.has(new URL(`${base}${request.path}`).pathname) && (request.method === 'GET' || request.method === 'HEAD')
          if (plain || request.method === 'HEAD') return
          for (const pattern of LEAK_PATTERNS) expect(pattern.test(answer.text), `${where} matches ${pattern}`).toBe(false)
          expect(envelopeProblems(answer), where).toEqual([])
          if (answer.json.ok === false) expect(answer.text.includes(MARK), `${where}: the error echoes a sent value`).toBe(false)
        }),
        runs(400),
      )
      seen.print('arbitrary requests:')
      // Anything that became an internal error was logged with its request id, and there was none.
      expect(sandbox.logs.filter((line) => line.includes('"level":"error"'))).toEqual([])
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------------------------------------
// 2. Routing does not depend on the Host

describe('fuzz: the Host a request names does not change its route', () => {
  test(
    'session and modify route the same for any host name',
    async () => {
      const sandbox = await buildApp({ SANDBOX_RATE_LIMIT: '1000000000' })
      const host = fc.oneof(fc.domain(), fc.ipV4(), fc.constantFrom('a', 'ab', 'api', 'sbx', 'x.y', 'localhost'))
      const port = fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: undefined })
      await fc.assert(
        fc.asyncProperty(host, port, async (name, portNumber) => {
          const origin = `http://${name}${portNumber === undefined ? '' : `:${portNumber}`}`
          const session = await send(sandbox.app, `${origin}/api/sandbox/session`, { method: 'POST' })
          expect({ origin, status: session.status, code: session.json?.error?.code }).toEqual({ origin, status: 200, code: undefined })
          const modify = await send(sandbox.app, `${origin}/api/sandbox/policy/pol_sbx_0123456789abcdef0123/modify`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ scenario: 'correct_partner_reference', partner_reference: 'X' }),
          })
          expect({ origin, code: modify.json?.error?.code }).toEqual({ origin, code: 'policy_not_found' })
        }),
        runs(100),
      )
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------------------------------------
// 3. Model-based: sessions, search, issue, modify, clock, sweep and rate limit

const LIMIT = 6
const WINDOW_MS = 60_000
const TTL_MS = 300_000
const TOMBSTONE_MS = 24 * 60 * 60 * 1000
const NETWORKS = ['198.18.0.1', '198.18.0.2']
const CLIENTS = 3

interface ModelSession {
  expiresAt: number
  forgotten: boolean
  hits: number[]
  quotes: { planId: string; trip: Record<string, string>; ages: number[] }[]
  policies: { ref: string; start: string; end: string; endorsements: number; partnerReference: string | null }[]
}

interface Model {
  now: number
  /** Which model session each client's cookie names (null: none). */
  clients: (number | null)[]
  sessions: ModelSession[]
  networkHits: Record<string, number[]>
  counter: number
}

interface Real {
  sandbox: Awaited<ReturnType<typeof buildApp>>
  tokens: (string | undefined)[]
}

type Lookup = { kind: 'none' } | { kind: 'expired' } | { kind: 'live'; index: number }

function lookup(model: Model, client: number): Lookup {
  const index = model.clients[client]
  if (index === null || index === undefined) return { kind: 'none' }
  const session = model.sessions[index]!
  if (session.forgotten) return { kind: 'none' }
  return session.expiresAt > model.now ? { kind: 'live', index } : { kind: 'expired' }
}

interface RateOutcome {
  admitted: boolean
  remaining: number
  resetAt: number
}

/** The contract's two rolling counters, as rate-window.ts decides them. */
function rate(model: Model, session: ModelSession | null, network: string): RateOutcome {
  const since = model.now - WINDOW_MS
  const counters = [model.networkHits[network]!, ...(session ? [session.hits] : [[]])].map((hits) => {
    const inside = hits.filter((at) => at > since)
    return { used: inside.length, oldest: inside.length ? Math.min(...inside) : null }
  })
  const full = counters.filter((counter) => counter.used >= LIMIT)
  if (full.length > 0) return { admitted: false, remaining: 0, resetAt: Math.max(...full.map((counter) => (counter.oldest ?? model.now) + WINDOW_MS)) }
  return {
    admitted: true,
    ...binding(
      counters.map((counter) => ({ used: counter.used + 1, oldest: counter.oldest ?? model.now })),
      model.now,
    ),
  }
}

/** The allowance of the network alone, counting nothing (answers refused before the rate check). */
function peek(model: Model, network: string): RateOutcome {
  const inside = model.networkHits[network]!.filter((at) => at > model.now - WINDOW_MS)
  return { admitted: false, ...binding([{ used: inside.length, oldest: inside.length ? Math.min(...inside) : null }], model.now) }
}

/**
 * The contract's words, not the implementation's loop: `remaining` is the least room of any counter;
 * it next grows when every counter with that least room has its oldest request leave the window.
 */
function binding(counters: { used: number; oldest: number | null }[], now: number) {
  const remaining = Math.min(...counters.map((counter) => LIMIT - counter.used))
  const tightest = counters.filter((counter) => LIMIT - counter.used === remaining)
  return { remaining, resetAt: Math.max(...tightest.map((counter) => (counter.oldest === null ? now : counter.oldest + WINDOW_MS))) }
}

interface Expected {
  status: number
  code?: string
  rate: RateOutcome
  sessionExpiresAt: number | null
  /** The model session the call ran in, once admitted. */
  session: number | null
  now: number
}

/**
 * The pipeline as the contract orders it: session expiry, then the rate limit (a session is
 * created only for an admitted call), then whatever `rest` decides inside the admitted session.
 */
function predict(
  model: Model,
  client: number,
  network: string,
  explicitCreate: boolean,
  rest: (session: number) => { status: number; code?: string },
): Expected {
  const found: Lookup = explicitCreate ? { kind: 'none' } : lookup(model, client)
  if (found.kind === 'expired') {
    model.clients[client] = null // the answer clears the cookie
    return { status: 401, code: 'session_expired', rate: peek(model, network), sessionExpiresAt: null, session: null, now: model.now }
  }
  const live = found.kind === 'live' ? model.sessions[found.index]! : null
  const outcome = rate(model, live, network)
  if (!outcome.admitted) {
    return { status: 429, code: 'rate_limited', rate: outcome, sessionExpiresAt: live ? live.expiresAt : null, session: null, now: model.now }
  }
  let index: number
  if (found.kind === 'live') index = found.index
  else {
    model.sessions.push({ expiresAt: model.now + TTL_MS, forgotten: false, hits: [], quotes: [], policies: [] })
    index = model.sessions.length - 1
    model.clients[client] = index
  }
  model.sessions[index]!.hits.push(model.now)
  model.networkHits[network]!.push(model.now)
  return { ...rest(index), rate: outcome, sessionExpiresAt: model.sessions[index]!.expiresAt, session: index, now: model.now }
}

async function callReal(real: Real, client: number, network: string, path: string, body: unknown): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-forwarded-for': network }
  const token = real.tokens[client]
  if (token !== undefined) headers.cookie = `sbx_session=${token}`
  const answer = await send(real.sandbox.app, `http://localhost${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
  if (answer.token !== undefined) real.tokens[client] = answer.token === '' ? undefined : answer.token
  modelTally.add(answer)
  return answer
}

function compare(answer: Answer, expected: Expected, what: string) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
  expect(envelopeProblems(answer), what).toEqual([])
  expect({
    what,
    status: answer.status,
    code: answer.json.error?.code,
    remaining: answer.json.meta.rate_limit.remaining,
    reset_at: answer.json.meta.rate_limit.reset_at,
    session_expires_at: answer.json.meta.session_expires_at,
  }).toEqual({
    what,
    status: expected.status,
    code: expected.code,
    remaining: expected.rate.remaining,
    reset_at: iso(expected.rate.resetAt),
    session_expires_at: iso(expected.sessionExpiresAt),
  })
  if (expected.status === 429) expect(answer.headers.get('retry-after')).toBe(String(Math.max(1, Math.ceil((expected.rate.resetAt - expected.now) / 1000))))
}

type Command = fc.AsyncCommand<Model, Real>

class OpenSession implements Command {
  constructor(
    readonly client: number,
    readonly network: string,
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const expected = predict(model, this.client, this.network, true, () => ({ status: 200 }))
    const answer = await callReal(real, this.client, this.network, '/api/sandbox/session', {})
    compare(answer, expected, this.toString())
  }
  toString = () => `session(client ${this.client}, ${this.network})`
}

class Search implements Command {
  constructor(
    readonly client: number,
    readonly network: string,
    readonly offset: number,
    readonly ages: number[],
    readonly destination: string,
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const trip = {
      origin_country: 'IN',
      destination_country: this.destination,
      start_date: day(model.now, this.offset),
      end_date: day(model.now, this.offset + 6),
    }
    const expected = predict(model, this.client, this.network, false, () => ({ status: 200 }))
    const answer = await callReal(real, this.client, this.network, '/api/sandbox/plans/search', { trip, travellers: this.ages.map((age) => ({ age })) })
    compare(answer, expected, this.toString())
    if (expected.status === 200) {
      for (const plan of answer.json.data.plans) {
        model.sessions[expected.session!]!.quotes.push({ planId: plan.plan_id, trip, ages: [...this.ages].sort((a, b) => a - b) })
      }
    }
  }
  toString = () => `search(client ${this.client}, ${this.network}, +${this.offset}d, ages ${this.ages}, IN→${this.destination})`
}

/** A pick among all sessions' items, or (when `own` and there are some) among the client's own. */
function choose<T>(model: Model, client: number, own: boolean, pick: number, items: (session: ModelSession) => T[]) {
  const all = model.sessions.flatMap((session, index) => items(session).map((item) => ({ index, item })))
  const mine = all.filter(({ index }) => index === model.clients[client])
  const from = own && mine.length > 0 ? mine : all
  return from[pick % from.length]!
}

class Issue implements Command {
  constructor(
    readonly client: number,
    readonly network: string,
    readonly pick: number,
    readonly own: boolean,
    readonly changeAges: boolean,
  ) {}
  check = (model: Readonly<Model>) => model.sessions.some((session) => session.quotes.length > 0)
  async run(model: Model, real: Real) {
    const { index: owner, item: quote } = choose(model, this.client, this.own, this.pick, (session) => session.quotes)
    const ages = this.changeAges ? [...quote.ages.slice(1), 99] : quote.ages
    const today = Math.floor(model.now / DAY)
    const expected = predict(model, this.client, this.network, false, (session) => {
      if (Date.parse(`${quote.trip.start_date}T00:00:00Z`) / DAY < today) return { status: 422, code: 'validation_failed' }
      if (session !== owner) return { status: 404, code: 'plan_not_found' }
      if (this.changeAges) return { status: 409, code: 'plan_mismatch' }
      return { status: 200 }
    })
    model.counter += 1
    const answer = await callReal(real, this.client, this.network, '/api/sandbox/policy/new', {
      plan_id: quote.planId,
      trip: quote.trip,
      travellers: ages.map((age) => ({ age })),
    })
    compare(answer, expected, this.toString())
    if (expected.status === 200) {
      expect(answer.json.data.status).toBe('issued')
      model.sessions[expected.session!]!.policies.push({
        ref: answer.json.data.policy_ref,
        start: quote.trip.start_date!,
        end: quote.trip.end_date!,
        endorsements: 0,
        partnerReference: null,
      })
    }
  }
  toString = () => `issue(client ${this.client}, ${this.network}, ${this.own ? 'own' : 'any'} quote #${this.pick}${this.changeAges ? ', other ages' : ''})`
}

class Modify implements Command {
  constructor(
    readonly client: number,
    readonly network: string,
    readonly pick: number,
    readonly own: boolean,
    readonly extendBy: number | null,
  ) {}
  check = (model: Readonly<Model>) => model.sessions.some((session) => session.policies.length > 0)
  async run(model: Model, real: Real) {
    const { index: owner, item: policy } = choose(model, this.client, this.own, this.pick, (session) => session.policies)
    model.counter += 1
    const newEnd = this.extendBy === null ? null : new Date(Date.parse(`${policy.end}T00:00:00Z`) + this.extendBy * DAY).toISOString().slice(0, 10)
    const body =
      newEnd === null
        ? { scenario: 'correct_partner_reference', partner_reference: `REF-${model.counter}` }
        : { scenario: 'extend_end_date', new_end_date: newEnd }
    const expected = predict(model, this.client, this.network, false, (session) => {
      if (session !== owner) return { status: 404, code: 'policy_not_found' }
      if (newEnd !== null && (Date.parse(newEnd) - Date.parse(policy.start)) / DAY > 180) return { status: 422, code: 'trip_too_long' }
      return { status: 200 }
    })
    const answer = await callReal(real, this.client, this.network, `/api/sandbox/policy/${policy.ref}/modify`, body)
    compare(answer, expected, this.toString())
    if (expected.status === 200) {
      policy.endorsements += 1
      if (newEnd !== null) policy.end = newEnd
      expect(answer.json.data.status).toBe('endorsed')
      expect(answer.json.data.endorsement.sequence).toBe(policy.endorsements)
    }
  }
  toString = () =>
    `modify(client ${this.client}, ${this.network}, ${this.own ? 'own' : 'any'} policy #${this.pick}, ${this.extendBy === null ? 'partner reference' : `extend ${this.extendBy}d`})`
}

class Advance implements Command {
  constructor(readonly ms: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    model.now += this.ms
    real.sandbox.setNow(model.now)
  }
  toString = () => `advance(${this.ms} ms)`
}

class Sweep implements Command {
  check = () => true
  async run(model: Model, real: Real) {
    await real.sandbox.services.storage.sweep(model.now)
    for (const session of model.sessions) if (session.expiresAt <= model.now - TOMBSTONE_MS) session.forgotten = true
  }
  toString = () => 'sweep()'
}

describe('fuzz: model-based run of the contract', () => {
  test(
    'sessions, search, issue, modify, expiry, sweep and the rate limit behave as the model predicts',
    async () => {
      const client = fc.integer({ min: 0, max: CLIENTS - 1 })
      const network = fc.constantFrom(...NETWORKS)
      const search = fc
        .tuple(
          client,
          network,
          fc.integer({ min: 1, max: 20 }),
          fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 3 }),
          fc.constantFrom('FR', 'IN', 'US', 'TH'),
        )
        .map(([c, n, offset, ages, destination]) => new Search(c, n, offset, ages, destination))
      const issue = fc
        .tuple(client, network, fc.nat(), fc.boolean(), fc.boolean())
        .map(([c, n, pick, own, changeAges]) => new Issue(c, n, pick, own, changeAges))
      const modify = fc
        .tuple(client, network, fc.nat(), fc.boolean(), fc.option(fc.integer({ min: 1, max: 90 }), { nil: null }))
        .map(([c, n, pick, own, extend]) => new Modify(c, n, pick, own, extend))
      // fc.commands picks uniformly among these: the repeats are weights.
      const commands = [
        fc.tuple(client, network).map(([c, n]) => new OpenSession(c, n)),
        search,
        search,
        issue,
        issue,
        issue,
        modify,
        modify,
        modify,
        fc.constantFrom(1_000, 5_000, 20_000, 61_000).map((ms) => new Advance(ms)),
        fc.constantFrom(10 * 60_000, 2 * 60 * 60_000, 25 * 60 * 60_000).map((ms) => new Advance(ms)),
        fc.constant(new Sweep()),
      ]
      await fc.assert(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 60, size: 'large' }), async (run) => {
          const sandbox = await buildApp({
            SANDBOX_RATE_LIMIT: String(LIMIT),
            SANDBOX_RATE_WINDOW_SECONDS: String(WINDOW_MS / 1000),
            SANDBOX_SESSION_TTL_SECONDS: String(TTL_MS / 1000),
            SANDBOX_TRUST_PROXY: '1',
          })
          const setup = () => ({
            model: {
              now: START_MS,
              clients: Array(CLIENTS).fill(null),
              sessions: [],
              networkHits: Object.fromEntries(NETWORKS.map((n) => [n, []])),
              counter: 0,
            } as Model,
            real: { sandbox, tokens: Array(CLIENTS).fill(undefined) } as Real,
          })
          await fc.asyncModelRun(setup, run)
          expect(sandbox.logs.filter((line) => line.includes('"level":"error"'))).toEqual([])
        }),
        runs(30),
      )
      modelTally.print('model-based run:')
    },
    TIMEOUT,
  )
})
