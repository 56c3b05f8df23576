/** @module A session's console link and its data (modules/console/): the same link each time, read without the cookie, never a session token. */
import { expect, test } from 'bun:test'
import { inProcessApp, tripFrom } from './support/app'
import { CONSOLE_VIEWS_PER_MINUTE } from '../../src/modules/console'
test("the console link is the same each time, shows the session's policies and calls without its cookie, and cannot call the API", async () => {
  const sandbox = await inProcessApp()
  const opened = await sandbox.call('session', {})
  const cookie = opened.cookie!
  const trip = tripFrom(sandbox.now(), 5, 3)
  const plan = (await sandbox.call('plans/search', { trip, travellers: [{ age: 30 }] }, { cookie })).body.data.plans[0].plan_id
  await sandbox.call('policy/new', { plan_id: plan, trip, travellers: [{ age: 30 }], partner_reference: '<script>x</script>' }, { cookie })
  const link = await sandbox.call('console', {}, { cookie })
  expect(link.status).toBe(200)
  const again = await sandbox.call('console', {}, { cookie })
  expect(again.body.data.console_url).toBe(link.body.data.console_url)
  expect(opened.body.data.console_url).toBe(link.body.data.console_url)
  // At the origin the call was sent to, so a partner can print it and open it as it is.
  expect(link.body.data.console_url).toMatch(/^http:\/\/localhost\/api\/sandbox\/console\/sbx_[0-9a-f]{20}\.[A-Za-z0-9_-]{43}$/)
  expect(link.body.data.console_url).toContain(opened.body.data.session_ref)
  // A call is logged once its answer has gone (the access-log step runs after it).
  await new Promise((resolve) => setTimeout(resolve, 20))
  const data = await sandbox.app.handle(new Request(`${link.body.data.console_url}/data`))
  expect(data.status).toBe(200)
  const body = (await data.json()) as any
  expect(body.policies).toHaveLength(1)
  expect(body.calls.length).toBeGreaterThanOrEqual(3)
  const wrong = await sandbox.app.handle(new Request(`http://localhost/api/sandbox/console/${'a'.repeat(43)}/data`))
  expect(wrong.status).toBe(404)
  // The session's ref is public: with any other proof the link finds nothing.
  const forged = await sandbox.app.handle(new Request(`${link.body.data.console_url.replace(/\.[^.]+$/, `.${'A'.repeat(43)}`)}/data`))
  expect(forged.status).toBe(404)
  // The console token is not a session token: the API treats it as no cookie (a new session).
  const token = link.body.data.console_url.split('/').at(-1)
  const asCookie = await sandbox.call('policies', {}, { cookie: token })
  expect(asCookie.body.data.policies).toEqual([])
})

test("viewing the console uses its own allowance, not the session's, is not logged, and ends with the session", async () => {
  const sandbox = await inProcessApp({ SANDBOX_RATE_LIMIT: '30' })
  const opened = await sandbox.call('session', { lifetime_minutes: 5 })
  const view = (suffix = '') => sandbox.app.handle(new Request(`${opened.body.data.console_url}${suffix}`))
  const remaining = (await sandbox.call('policies', {}, { cookie: opened.cookie })).body.meta.rate_limit.remaining
  for (let i = 0; i < CONSOLE_VIEWS_PER_MINUTE; i++) expect((await view(i % 2 ? '/data' : '')).status).toBe(200)
  const refused = await view('/data')
  expect(refused.status).toBe(429)
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
  // The session's own calls are untouched: one more call leaves one fewer than before the views.
  // (A call is logged once its answer has gone: in process, a turn of the event loop later.)
  await new Promise((resolve) => setTimeout(resolve, 20))
  const after = await sandbox.call('requests', {}, { cookie: opened.cookie })
  expect(after.body.meta.rate_limit.remaining).toBe(remaining - 1)
  const paths: string[] = after.body.data.calls.map((call: { path: string }) => call.path)
  expect(paths).toContain('/api/sandbox/policies')
  expect(paths.some((path) => path.includes('/console'))).toBe(false)
  // A minute later the console's allowance is back; once the session ended, its data is not found.
  sandbox.advance(60_000)
  expect((await view('/data')).status).toBe(200)
  sandbox.advance(5 * 60_000)
  expect((await view('/data')).status).toBe(404)
})
