/**
 * @module What a call's entry in the request log keeps (http/call-record.ts): never a secret shown
 * once, the media type as sent, a body as sent whatever text it holds, and a long one cut and said so.
 */
import { expect, test } from 'bun:test'
import { inProcessApp, tripFrom } from './support/app'

/** A turn of the event loop: a call is logged once its answer has gone. */
const answered = () => new Promise((resolve) => setTimeout(resolve, 20))

test('the webhook secret and the console link are answered once and never kept', async () => {
  // On loopback a sandbox takes a documentation address (its deliveries go nowhere).
  const sandbox = await inProcessApp({ HOST: '127.0.0.1' })
  const opened = await sandbox.call('session', {})
  const cookie = opened.cookie!
  const registered = await sandbox.call('webhook', { url: 'http://192.0.2.10/hooks' }, { cookie })
  expect(registered.body.data.secret).toMatch(/^whsec_/)
  await answered()
  const calls = (await sandbox.call('requests', {}, { cookie })).body.data.calls
  expect(calls.map((call: { path: string }) => call.path)).toEqual(['/api/sandbox/webhook', '/api/sandbox/session'])
  expect(calls[0].answer.body.data.secret).toBe('(not kept in the log)')
  expect(calls[1].answer.body.data.console_url).toBe('(not kept in the log)')
  const stored = sandbox.db.prepare<{ entry: string }>('SELECT entry FROM request_log').all()
  expect(stored).toHaveLength(2)
  const text = stored.map((row) => row.entry).join('\n')
  expect(text).not.toContain(registered.body.data.secret)
  expect(text).not.toContain(opened.body.data.console_url.split('/').at(-1))
})

test('a body is kept as it was sent, whatever text it holds, with the media type it was sent as', async () => {
  const sandbox = await inProcessApp()
  const cookie = (await sandbox.call('session', {})).cookie!
  // Refused for validation, and kept: what the partner sent wrong is what they need to see.
  const odd = { trip: '\u0000answer" "\u0000sent"', travellers: [{ age: 30, note: '"\u0000answer"' }] }
  const refused = await sandbox.call('plans/search', odd, { cookie, headers: { 'content-type': 'application/json; charset=utf-8' } })
  expect(refused.status).toBe(422)
  await answered()
  const [call] = (await sandbox.call('requests', {}, { cookie })).body.data.calls
  expect(call.request).toEqual({ content_type: 'application/json', body: odd, note: null })
  expect(call.answer.body).toEqual(refused.body)
})

test('an answer longer than 16 KiB is cut, and says so', async () => {
  const sandbox = await inProcessApp({ SANDBOX_RATE_LIMIT: '1000' })
  const cookie = (await sandbox.call('session', {})).cookie!
  const trip = tripFrom(sandbox.now(), 5, 3)
  const plan = (await sandbox.call('plans/search', { trip, travellers: [{ age: 30 }] }, { cookie })).body.data.plans[0].plan_id
  const policy = (await sandbox.call('policy/new', { plan_id: plan, trip, travellers: [{ age: 30 }] }, { cookie })).body.data.policy_ref
  // Each event carries the policy with its whole history: a few corrections make the list long.
  for (let index = 1; index <= 16; index++) {
    await sandbox.call(`policy/${policy}/modify`, { scenario: 'correct_partner_reference', partner_reference: `BK-${index}` }, { cookie })
  }
  const events = await sandbox.call('events', {}, { cookie })
  const text = JSON.stringify(events.body)
  expect(text.length).toBeGreaterThan(16 * 1024)
  await answered()
  const [call] = (await sandbox.call('requests', {}, { cookie })).body.data.calls
  expect(call.path).toBe('/api/sandbox/events')
  expect(call.answer.truncated).toBe(true)
  expect(call.answer.body).toBe(text.slice(0, 16 * 1024))
})

test('a request_id that does not decode is not found as a call, and a time filter no date parses is refused', async () => {
  const sandbox = await inProcessApp()
  const cookie = (await sandbox.call('session', {})).cookie!
  const undecodable = await sandbox.call('requests/%E0%A4%A', {}, { cookie })
  expect([undecodable.status, undecodable.body.error.code]).toEqual([404, 'request_not_found'])
  const event = await sandbox.call('events/%E0%A4%A/resend', {}, { cookie })
  expect([event.status, event.body.error.code]).toEqual([404, 'event_not_found'])
  for (const since of ['2026-02-30T10:00:00Z', '2026-11-22T25:00:00Z', 'yesterday']) {
    const refused = await sandbox.call('requests', { since }, { cookie })
    expect([refused.status, refused.body.error.code, refused.body.error.details?.[0]?.field]).toEqual([422, 'validation_failed', 'since'])
  }
})
