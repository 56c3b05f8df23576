/**
 * Logs and health (issue #4): one JSON line per request on stdout with request_id, method, path,
 * status, duration_ms and session_ref; no personal-data value from a rejected body and no session
 * token ever reaches the output (stdout or stderr); /healthz and /readyz answer 200.
 */
import { API, call, expect, expectError, expectOk, type Reply, sleep, test, tripFrom, uniqueNetwork } from './support/client'
import { portOf, rawExchange, rawHead } from './support/raw'
import { currentTarget } from './support/server'
import { storeBytes } from './support/store'
import { before, withTimeSpans } from '../support/wait'

/** Values that must never be logged: each appears only in a request the server refuses. */
const MARK = 'Zqxlog'
const PERSONAL = {
  firstName: `${MARK}Firstname`,
  email: `${MARK.toLowerCase()}.person@example.org`,
  passport: `${MARK}P1234567`,
  phone: `+91 98${MARK}`,
  country: `${MARK}XX`,
}
/** Accepted, but never logged nor stored as is: an e-mail-shaped Idempotency-Key. */
const EMAIL_KEY = `${MARK.toLowerCase()}.key@example.org`

/** How a path is logged: a segment that is neither our route's word nor a reference is a placeholder. */
const LOGGED: Record<string, string> = {
  '/api/sandbox/nope': '/api/sandbox/:segment',
  [API.modify(PERSONAL.email)]: '/api/sandbox/policy/:policy_ref/modify',
}

interface LogLine {
  request_id: string
  method: string
  path: string
  status: number
  duration_ms: number
  session_ref: string | null
}

test.describe('logs', () => {
  test('one JSON line per request on stdout; no personal data from a refused body and no token in any output', async ({ privateServer }) => {
    test.setTimeout(90_000)
    // A short session, so that an expired cookie can be presented too: 3 seconds, longer only if
    // this machine cannot make the calls below within it.
    await withTimeSpans([3, 6, 12], async (seconds) => {
      const server = await privateServer(`logs-${seconds}`, { SANDBOX_SESSION_TTL_SECONDS: String(seconds) })
      const network = uniqueNetwork()
      const trip = tripFrom(6, 4)
      const sent: { reply: Reply; method: string; path: string }[] = []
      const send = async (path: string, options: Parameters<typeof call>[2] = {}) => {
        const reply = await call(server.url, path, { network, ...options })
        sent.push({ reply, method: options.method ?? 'POST', path })
        return reply
      }

      const opened = await send(API.session)
      const token = opened.token!
      const { session_ref: sessionRef, expires_at: expiresAt } = (await expectOk(opened)).data
      await before(Date.parse(expiresAt), async () => {
        const plans = (await expectOk(await send(API.search, { body: { trip, travellers: [{ age: 30 }] }, cookie: token }))).data.plans
        const issue = { plan_id: plans[0].plan_id, trip, travellers: [{ age: 30 }], partner_reference: 'BK-LOG-1' }
        const policy = (await expectOk(await send(API.issue, { body: issue, headers: { 'idempotency-key': EMAIL_KEY }, cookie: token }))).data
        expect((await expectOk(await send(API.issue, { body: issue, headers: { 'idempotency-key': EMAIL_KEY }, cookie: token }))).data.policy_ref).toBe(
          policy.policy_ref,
        )
        await expectOk(
          await send(API.modify(policy.policy_ref), {
            body: { scenario: 'correct_partner_reference', partner_reference: 'BK-LOG-2' },
            headers: { 'idempotency-key': `m.${EMAIL_KEY}` },
            cookie: token,
          }),
        )
        // An e-mail where a policy_ref belongs.
        await expectError(
          await send(API.modify(PERSONAL.email), { body: { scenario: 'correct_partner_reference', partner_reference: 'BK-LOG-3' }, cookie: token }),
          404,
          'policy_not_found',
        )

        // Refused bodies full of personal data, at several depths and on every endpoint.
        await expectError(
          await send(API.issue, {
            body: {
              plan_id: plans[0].plan_id,
              trip,
              travellers: [{ age: 30, first_name: PERSONAL.firstName, passport: PERSONAL.passport }],
              contact: { email: PERSONAL.email, phone: PERSONAL.phone },
            },
            cookie: token,
          }),
          422,
          'pii_not_allowed',
        )
        await expectError(await send(API.search, { body: { trip, travellers: [{ age: 30 }], note: PERSONAL.email }, cookie: token }), 422, 'pii_not_allowed')
        await expectError(
          await send(API.modify(policy.policy_ref), { body: { scenario: 'correct_partner_reference', partner_reference: PERSONAL.email }, cookie: token }),
          422,
          'pii_not_allowed',
        )
        // Refused for other reasons, with the marked values inside.
        await expectError(
          await send(API.search, { body: { trip: { ...trip, destination_country: PERSONAL.country }, travellers: [{ age: 30 }] }, cookie: token }),
          422,
          'validation_failed',
        )
        await expectError(await send(API.search, { body: `{"trip": "${PERSONAL.passport}", `, cookie: token }), 400, 'invalid_json')
        await expectError(
          await send(API.search, { body: PERSONAL.passport, headers: { 'content-type': 'text/plain' }, cookie: token }),
          415,
          'unsupported_media_type',
        )
        await expectError(
          await send(API.search, { body: JSON.stringify({ pad: `${PERSONAL.passport}${'x'.repeat(17_000)}` }), cookie: token }),
          413,
          'payload_too_large',
        )
        await expectError(
          await send(API.issue, {
            body: { plan_id: plans[0].plan_id, trip, travellers: [{ age: 30 }] },
            headers: { 'idempotency-key': `${MARK} key with spaces` },
            cookie: token,
          }),
          422,
          'validation_failed',
        )
        await expectError(await send('/api/sandbox/nope', { cookie: token }), 404, 'not_found')
        await expectError(await send(API.search, { method: 'GET', cookie: token }), 405, 'method_not_allowed')
      })
      // A forged cookie, and later the expired one.
      const forged = `${MARK}${'f'.repeat(30)}`
      await expectOk(await send(API.session, { cookie: forged }))
      await sleep(Date.parse(expiresAt) - Date.now() + 100)
      const last = await send(API.search, { body: { trip, travellers: [{ age: 30 }] }, cookie: token })
      await expectError(last, 401, 'session_expired')

      // The last line is written after the answer.
      await expect.poll(() => server.stdout().includes(last.headers.get('x-request-id')!), { timeout: 10_000 }).toBe(true)
      const stdout = server.stdout()
      const lines = stdout.split('\n').filter((line) => line.trim() !== '')
      const parsed = lines.map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>
        } catch {
          return { unparsable: line }
        }
      })
      expect(
        parsed.filter((line) => 'unparsable' in line),
        'every stdout line is JSON',
      ).toEqual([])
      const requestLines = parsed.filter((line) => typeof line.request_id === 'string' && 'status' in line) as unknown as LogLine[]

      for (const { reply, method, path } of sent) {
        const requestId = reply.headers.get('x-request-id')!
        const mine = requestLines.filter((line) => line.request_id === requestId)
        expect(mine.length, `one log line for ${method} ${path} (${requestId})`).toBe(1)
        const line = mine[0]!
        expect({ method: line.method, path: line.path, status: line.status }).toEqual({
          method,
          path: LOGGED[path] ?? path.split('?')[0],
          status: reply.status,
        })
        expect(typeof line.duration_ms).toBe('number')
        expect(line.duration_ms).toBeGreaterThanOrEqual(0)
        expect(line.session_ref === null || /^sbx_[0-9a-f]+$/.test(line.session_ref)).toBe(true)
      }
      // The session's own calls carry its ref.
      const searchLine = requestLines.find((line) => line.request_id === sent[1]!.reply.headers.get('x-request-id'))
      expect(searchLine?.session_ref).toBe(sessionRef)

      // Nothing from a refused body, and no token (live, forged or expired) anywhere in the output.
      const output = server.output()
      const secrets = [
        ...Object.values(PERSONAL),
        EMAIL_KEY,
        MARK,
        MARK.toLowerCase(),
        token,
        forged,
        ...sent.map(({ reply }) => reply.token).filter((value): value is string => !!value),
      ]
      expect(secrets.filter((secret) => output.includes(secret))).toEqual([])
      // Nor at rest: the database (and its WAL) never holds personal data, the key or a token. The
      // request log keeps a body refused for other reasons as it was sent (its partner needs to see
      // it), so the marked country of the validation failure is there (once the log is written: on
      // the embedded file within 5 s), and only it.
      const storedBytes = async () => (await storeBytes(server.dbPath)).toString('latin1')
      await expect.poll(async () => (await storedBytes()).includes(PERSONAL.country), { timeout: 15_000 }).toBe(true)
      const stored = await storedBytes()
      const atRest = secrets.filter((secret) => ![MARK, PERSONAL.country].includes(secret))
      expect(atRest.filter((secret) => stored.includes(secret))).toEqual([])
      // Every mark at rest is that country's: no other marked value, not even a part of one.
      expect(stored.split(MARK).length).toBe(stored.split(PERSONAL.country).length)
    })
  })
})

test.describe('logs of broken requests', () => {
  test('a client that leaves mid-body, a malformed chunked body, an unknown method: no error line, no caller text', async ({ privateServer }) => {
    test.setTimeout(30_000)
    const server = await privateServer('logs-broken')
    const port = portOf(server.url)
    const json = { 'Content-Type': 'application/json' }
    const leave = { deadlineMs: 400 } // our side closes then, mid-body
    await rawExchange(port, [rawHead(API.session, { ...json, 'Content-Length': 100 }), '{"a":', { pause: 300 }], leave)
    await rawExchange(port, [rawHead(API.session, { ...json, 'Transfer-Encoding': 'chunked' }), '5\r\n{"a":\r\n', { pause: 300 }], leave)
    await rawExchange(port, [rawHead(API.session, { ...json, 'Transfer-Encoding': 'chunked' }), 'zz\r\n{}\r\n0\r\n\r\n', { pause: 300 }], leave)
    const method = `${MARK.toUpperCase()}METHOD`
    await rawExchange(port, [`${method} ${API.session} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`], { deadlineMs: 1_000, responses: 1 })
    // Each broken body ends in a request line (Node waits out the 10 s body deadline: 408). Deno's
    // server mostly drops the malformed chunk size itself, before the sandbox sees the request; on a
    // busy machine it sometimes hands it on, and the sandbox answers 400.
    const expected = currentTarget() === 'deno' ? 2 : 3
    const lines = () =>
      server
        .stdout()
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line) as Partial<LogLine>)
    const statuses = () =>
      lines()
        .filter((line) => line.method === 'POST' && line.path === API.session)
        .map((line) => line.status)
    // Deno passes the unknown method to the sandbox (405); the others refuse it in their parsers.
    const others = () =>
      lines()
        .filter((line) => line.method === 'OTHER')
        .map((line) => line.status)
    const expectedOthers = currentTarget() === 'deno' ? [405] : []
    const deadline = Date.now() + 15_000
    while ((statuses().length < expected || others().length < expectedOthers.length) && Date.now() < deadline) await sleep(100)
    expect(statuses().length).toBeGreaterThanOrEqual(expected)
    expect(statuses().length).toBeLessThanOrEqual(3)
    expect(statuses().filter((status) => status !== 400 && status !== 408)).toEqual([])
    expect(others()).toEqual(expectedOthers)
    const output = server.output()
    expect(output.split('\n').filter((line) => line.includes('"level":"error"'))).toEqual([])
    expect(output).not.toContain(method)
  })
})

test.describe('health', () => {
  test('GET /healthz and GET /readyz answer 200, and count against no allowance', async ({ baseURL }) => {
    const health = await call(baseURL!, '/healthz', { method: 'GET' })
    expect(health.status).toBe(200)
    expect(health.json).toEqual({ status: 'ok' })
    const ready = await call(baseURL!, '/readyz', { method: 'GET' })
    expect(ready.status).toBe(200)
    expect(ready.json?.status).toBe('ready')
    const network = uniqueNetwork()
    const before = (await expectOk(await call(baseURL!, API.session, { network }))).data
    for (let index = 0; index < 5; index++) {
      expect((await call(baseURL!, '/healthz', { method: 'GET', network })).status).toBe(200)
      expect((await call(baseURL!, '/readyz', { method: 'GET', network })).status).toBe(200)
    }
    const after = await call(baseURL!, API.session, { network })
    await expectOk(after)
    expect(after.json.meta.rate_limit.remaining).toBe(before.limits.requests - 2)
  })
})
