/** @module A session's console link and its data (modules/console/): the same link each time, read without the cookie, never a session token. */
import { expect, test } from 'bun:test'
import { inProcessApp, tripFrom } from './support/app'
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
  expect(link.body.data.console_url).toMatch(/^http:\/\/localhost\/api\/sandbox\/console\/[A-Za-z0-9_-]{43}$/)
  // A call is logged once its answer has gone (the access-log step runs after it).
  await new Promise((resolve) => setTimeout(resolve, 20))
  const data = await sandbox.app.handle(new Request(`${link.body.data.console_url}/data`))
  expect(data.status).toBe(200)
  const body = (await data.json()) as any
  expect(body.policies).toHaveLength(1)
  expect(body.calls.length).toBeGreaterThanOrEqual(3)
  const wrong = await sandbox.app.handle(new Request(`http://localhost/api/sandbox/console/${'a'.repeat(43)}/data`))
  expect(wrong.status).toBe(404)
  // The console token is not a session token: the API treats it as no cookie (a new session).
  const token = link.body.data.console_url.split('/').at(-1)
  const asCookie = await sandbox.call('policies', {}, { cookie: token })
  expect(asCookie.body.data.policies).toEqual([])
})
