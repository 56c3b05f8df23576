/**
 * Optional CORS (`SANDBOX_CORS_ORIGINS`): off by default; the listed origins get the preflight and
 * credentialed answers they need, any other origin nothing; the cookie becomes `SameSite=None;
 * Secure` so that a tool on another site gets it back. A real browser on another site drives it.
 */
import { createServer } from 'node:http'
import { openBrowser } from './support/browser'
import { API, expect, expectError, expectOk, searchBody, sessionCookie, test } from './support/client'
import { testPort } from './support/server'

const TOOL = 'http://tool.test:5173'
const preflight = (origin: string) => ({
  method: 'OPTIONS',
  headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, sandbox-outcome' },
})

test('off by default: no CORS headers, and a preflight is the 405 it always was', async ({ request }) => {
  const answer = await request.post(API.session, { headers: { origin: TOOL } })
  await expectOk(answer)
  expect(answer.headers()['access-control-allow-origin']).toBeUndefined()
  expect(sessionCookie(answer)).toContain('SameSite=Strict')
  const refused = await request.fetch(API.search, preflight(TOOL))
  await expectError(refused, 405, 'method_not_allowed')
  expect(refused.headers()['access-control-allow-origin']).toBeUndefined()
})

test('listed origins get the preflight and credentialed answers, errors included; others get nothing', async ({ privateServer, newClient }) => {
  const server = await privateServer('cors', { SANDBOX_CORS_ORIGINS: `https://other.example,${TOOL}` })
  const client = await newClient({ baseURL: server.url })

  const allowed = await client.fetch(API.search, preflight(TOOL))
  expect(allowed.status()).toBe(204)
  const headers = allowed.headers()
  expect(headers['access-control-allow-origin']).toBe(TOOL)
  expect(headers['access-control-allow-credentials']).toBe('true')
  expect(headers['access-control-allow-methods']).toContain('POST')
  expect(headers['access-control-allow-headers']).toContain('sandbox-outcome')
  expect(headers['vary']).toContain('Origin')

  const stranger = await client.fetch(API.search, preflight('https://evil.example'))
  expect(stranger.headers()['access-control-allow-origin']).toBeUndefined()

  const opened = await client.post(API.session, { headers: { origin: TOOL } })
  const body = await expectOk(opened)
  // A preflight counts against nothing.
  expect(body.meta.rate_limit.remaining).toBe(29)
  expect(opened.headers()['access-control-allow-origin']).toBe(TOOL)
  expect(opened.headers()['access-control-expose-headers']).toContain('ratelimit')
  // Loopback over plain HTTP: browsers take a Secure cookie from it, and SameSite=None needs one.
  expect(sessionCookie(opened)).toMatch(/SameSite=None/i)
  expect(sessionCookie(opened)).toMatch(/; Secure/i)
  const refused = await client.post(API.search, { headers: { origin: TOOL }, data: { trip: 'x' } })
  await expectError(refused, 422, 'validation_failed')
  expect(refused.headers()['access-control-allow-origin']).toBe(TOOL)
})

test.describe('in a browser', () => {
  // The suite's per-test network header would go out from the page too, and no browser sends it.
  test.use({ extraHTTPHeaders: {} })

  test('a real browser on another site opens a session and searches in it, with the cookie', async ({ privateServer }) => {
    test.skip(test.info().project.name !== 'bun', 'one browser run is enough: the headers are the same on every target (above)')
    test.setTimeout(90_000)
    // The tool's page on one site (127.0.0.1), the sandbox on another (localhost): a cross-site call.
    const pagePort = await testPort()
    const tool = `http://127.0.0.1:${pagePort}`
    const server = await privateServer('cors-browser', { SANDBOX_CORS_ORIGINS: tool })
    const sandbox = server.url.replace('127.0.0.1', 'localhost')
    const page = createServer((_, response) => response.end('<!doctype html><title>tool</title>')).listen(pagePort, '127.0.0.1')
    const browser = await openBrowser()
    try {
      const tab = await browser.newPage()
      await tab.goto(tool)
      const answers = await tab.evaluate(
        async ({ sandbox, search }) => {
          const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
            const response = await fetch(`${sandbox}${path}`, {
              method: 'POST',
              credentials: 'include',
              headers: { 'content-type': 'application/json', ...headers },
              body: JSON.stringify(body),
            })
            return { status: response.status, requestId: response.headers.get('x-request-id'), body: await response.json() }
          }
          const session = await call('/api/sandbox/session', {})
          const found = await call('/api/sandbox/plans/search', search)
          const forced = await call('/api/sandbox/plans/search', search, { 'sandbox-outcome': 'upstream_invalid' })
          return { session, found, forced }
        },
        { sandbox, search: searchBody() },
      )
      expect(answers.session.status).toBe(200)
      expect(answers.found.status).toBe(200)
      // The search ran in the session the first call opened: the browser sent its cookie back.
      expect(answers.found.body.meta.session_expires_at).toBe(answers.session.body.data.expires_at)
      expect(answers.found.body.meta.rate_limit.remaining).toBe(28)
      // Headers the page may read, and a request header it may send.
      expect(answers.found.requestId).toBe(answers.found.body.request_id)
      expect(answers.forced).toMatchObject({ status: 502, body: { error: { code: 'upstream_invalid' } } })
    } finally {
      await browser.close()
      page.close()
    }
  })
})
