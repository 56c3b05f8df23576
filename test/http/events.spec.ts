/**
 * Events and signed webhooks, on every target, with a real receiver on loopback: each change's
 * event arrives once, signed; a failing receiver gets it again with back-off; the pull list shows
 * what was pushed, with every attempt; a server killed with deliveries pending delivers them after
 * its restart; hosted mode refuses every address that is not public.
 */
import { randomUUID } from 'node:crypto'
import { verifyWebhook } from '../../src/modules/events/signature'
import { addDays, ages, API, before, expect, expectError, expectOk, issuePolicy, searchBody, searchPlans, test, TooSlow, tripFrom } from './support/client'
import { startReceiver, type Receiver } from './support/receiver'
import { currentTarget } from './support/server'

const EVENTS = '/api/sandbox/events'
const WEBHOOK = '/api/sandbox/webhook'
const resendPath = (id: string) => `/api/sandbox/events/${id}/resend`

type Client = Parameters<typeof searchPlans>[0]

async function register(client: Client, url: string): Promise<string> {
  const answer = (await expectOk(await client.post(WEBHOOK, { data: { url } }))).data
  expect(answer.url).toBe(url)
  expect(answer.secret).toMatch(/^whsec_[0-9a-f]{48}$/)
  return answer.secret
}

async function listed(client: Client, body: object = {}) {
  return (await expectOk(await client.post(EVENTS, { data: body }))).data
}

/** Waits until the receiver holds `count` deliveries. */
const receivedAll = (receiver: Receiver, count: number, timeout = 20_000) =>
  expect.poll(() => receiver.received.length, { timeout }).toBeGreaterThanOrEqual(count)

let receivers: Receiver[] = []
test.afterEach(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()))
  receivers = []
})
async function receiver(url?: string) {
  const started = await startReceiver(url)
  receivers.push(started)
  return started
}

test.describe('events and webhooks', () => {
  test('every change arrives once, signed, with the policy as read-back shows it; the pull list shows the same bodies, delivered', async ({ request }) => {
    const hooks = await receiver()
    const secret = await register(request, hooks.url)
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(9, 6), travellers: ages(38) })
    await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 2) } }))
    await expectOk(await request.post(API.cancel(policy.policy_ref)))
    const test = (await expectOk(await request.post(`${WEBHOOK}/test`))).data
    expect(test.type).toBe('webhook.test')

    await receivedAll(hooks, 5)
    const byType = new Map(hooks.events().map((event) => [event.type, event]))
    expect(
      hooks
        .events()
        .map((event) => event.type)
        .sort(),
    ).toEqual(['document.ready', 'policy.cancelled', 'policy.endorsed', 'policy.issued', 'webhook.test'])
    expect(new Set(hooks.events().map((event) => event.id)).size).toBe(5) // each once
    for (const delivery of hooks.received) {
      expect(verifyWebhook(secret, delivery.headers['sandbox-signature'] as string, delivery.body)).toBe(true)
      expect(
        verifyWebhook(
          secret.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
          delivery.headers['sandbox-signature'] as string,
          delivery.body,
        ),
      ).toBe(false)
      expect(delivery.headers['content-type']).toBe('application/json')
      expect(delivery.headers['sandbox-event-id']).toBe(JSON.parse(delivery.body).id)
    }
    // Format 2: the policy as read-back shows it, less its history (its count, and the endorsement made).
    const { endorsements, ...read } = (await expectOk(await request.post(API.read(policy.policy_ref)))).data
    expect(hooks.events().every((event) => event.version === 2)).toBe(true)
    expect(byType.get('policy.cancelled')!.data).toEqual({ ...read, endorsement_count: 1 })
    expect(byType.get('policy.issued')!.data).toMatchObject({ policy_ref: policy.policy_ref, status: 'issued', endorsement_count: 0 })
    expect(byType.get('policy.issued')!.data).not.toHaveProperty('endorsements')
    expect(byType.get('policy.endorsed')!.data).toMatchObject({ endorsement_count: 1, endorsement: endorsements[0] })
    expect(byType.get('document.ready')!.data.documents[0].state).toBe('ready')
    expect(byType.get('webhook.test')).toEqual(test)

    // The pull list: oldest first, each body as pushed, its one attempt answered 200.
    await expect.poll(async () => (await listed(request)).events.every((event: any) => event.delivery?.state === 'delivered'), { timeout: 10_000 }).toBe(true)
    const { events, has_more } = await listed(request)
    expect(has_more).toBe(false)
    expect(events.map((event: any) => event.type)).toEqual(['policy.issued', 'document.ready', 'policy.endorsed', 'policy.cancelled', 'webhook.test'])
    for (const event of events) {
      const { delivery, ...body } = event
      expect(body).toEqual(hooks.events().find((pushed) => pushed.id === event.id))
      expect(delivery.attempts).toEqual([{ attempt: 1, at: expect.any(String), status: 200, error: null }])
      expect(delivery.next_attempt_at).toBeNull()
    }
  })

  test('a receiver that fails twice gets the event on the third attempt; the pull list shows all three', async ({ request }) => {
    const hooks = await receiver()
    hooks.failNext(500, 503)
    await register(request, hooks.url)
    const test = (await expectOk(await request.post(`${WEBHOOK}/test`))).data
    await receivedAll(hooks, 3)
    expect(hooks.received.map((delivery) => delivery.status)).toEqual([500, 503, 200])
    expect(new Set(hooks.events().map((event) => event.id))).toEqual(new Set([test.id]))
    // Back-off: at least 1 s, then at least 5 s, between the attempts.
    expect(hooks.received[1]!.at - hooks.received[0]!.at).toBeGreaterThanOrEqual(1_000)
    expect(hooks.received[2]!.at - hooks.received[1]!.at).toBeGreaterThanOrEqual(5_000)
    await expect.poll(async () => (await listed(request)).events[0].delivery.state, { timeout: 10_000 }).toBe('delivered')
    const [event] = (await listed(request)).events
    expect(event.delivery.attempts.map((attempt: any) => [attempt.attempt, attempt.status])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ])
  })

  test('events without an endpoint are listed, undelivered; a resend delivers the same event once one is registered', async ({ request }) => {
    const { policy } = await issuePolicy(request)
    const { events } = await listed(request)
    expect(events.map((event: any) => [event.type, event.delivery])).toEqual([
      ['policy.issued', null],
      ['document.ready', null],
    ])
    await expectError(await request.post(resendPath(events[0].id)), 409, 'webhook_not_registered')
    await expectError(await request.post(`${WEBHOOK}/test`), 409, 'webhook_not_registered')
    const hooks = await receiver()
    await register(request, hooks.url)
    await expectOk(await request.post(resendPath(events[0].id)))
    await receivedAll(hooks, 1)
    const [pushed] = hooks.events()
    expect(pushed).toEqual({
      id: events[0].id,
      type: 'policy.issued',
      version: 2,
      created_at: events[0].created_at,
      session_ref: events[0].session_ref,
      data: events[0].data,
    })
    expect(pushed!.data.policy_ref).toBe(policy.policy_ref)
    await expectError(await request.post(resendPath('evt_00000000000000000000')), 404, 'event_not_found')
    await expectError(await request.post(resendPath('not-an-event')), 404, 'event_not_found')
  })

  test("a pending certificate's document.ready is listed and delivered only once it is ready", async ({ request }) => {
    const hooks = await receiver()
    await register(request, hooks.url)
    const trip = tripFrom(5, 6)
    const { plans } = await searchPlans(request, searchBody(trip, ages(33)))
    const policy = (
      await expectOk(
        await request.post(API.issue, { data: { plan_id: plans[0].plan_id, trip, travellers: ages(33) }, headers: { 'sandbox-outcome': 'document_pending' } }),
      )
    ).data
    const readyAt = Date.parse(policy.documents[0].ready_at)
    await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_partner_reference', partner_reference: 'BK-EARLY' } }))
    // Until the certificate is ready, its event holds back the ones after it: a cursor never passes it.
    const early = await before(readyAt, () => listed(request)).catch((error) => {
      if (error instanceof TooSlow) return null
      throw error
    })
    if (early && Date.now() < readyAt) {
      expect(early.events.map((event: any) => event.type)).toEqual(['policy.issued'])
    }
    // Whatever the first page held, the pages together are every event once, in order.
    const seen = early?.events ?? []
    await expect
      .poll(async () => [...seen, ...(await listed(request, { after: early?.next_cursor ?? undefined })).events].map((event: any) => event.type), {
        timeout: 20_000,
      })
      .toEqual(['policy.issued', 'document.ready', 'policy.endorsed'])
    await receivedAll(hooks, 3)
    const ready = hooks.received.find((delivery) => JSON.parse(delivery.body).type === 'document.ready')!
    expect(ready.at).toBeGreaterThanOrEqual(readyAt)
    expect(JSON.parse(ready.body).created_at).toBe(policy.documents[0].ready_at)
    expect(JSON.parse(ready.body).data.documents[0].state).toBe('ready')
  })

  test('the list pages with after and limit; an unknown cursor is validation_failed', async ({ request }) => {
    await issuePolicy(request)
    await issuePolicy(request)
    const first = await listed(request, { limit: 3 })
    expect(first.events).toHaveLength(3)
    expect(first.has_more).toBe(true)
    const rest = await listed(request, { after: first.next_cursor })
    expect(rest.events).toHaveLength(1)
    expect(rest.has_more).toBe(false)
    expect(rest.next_cursor).toBe(rest.events[0].id)
    expect((await listed(request, { after: rest.next_cursor })).events).toEqual([])
    const error = await expectError(await request.post(EVENTS, { data: { after: 'evt_00000000000000000000' } }), 422, 'validation_failed')
    expect(error.details).toEqual([{ field: 'after', issue: 'must be the id of an event of this session' }])
    await expectError(await request.post(EVENTS, { data: { limit: 0 } }), 422, 'validation_failed')
  })

  test("events are the session's own: another session lists none of them and cannot resend them", async ({ request, newClient }) => {
    await issuePolicy(request)
    const { events } = await listed(request)
    const other = await newClient()
    expect((await listed(other)).events).toEqual([])
    await expectError(await other.post(resendPath(events[0].id)), 404, 'event_not_found')
  })

  test('removing the endpoint ({"url": null}) drops what is pending; registering again gives a new secret', async ({ request }) => {
    const first = await register(request, `http://127.0.0.1:9/${randomUUID()}`) // discard port: nothing answers
    const second = await register(request, `http://127.0.0.1:9/${randomUUID()}`)
    expect(second).not.toBe(first)
    await issuePolicy(request)
    expect((await expectOk(await request.post(WEBHOOK, { data: { url: null } }))).data).toEqual({ url: null, event_types: expect.any(Array) })
    await expect.poll(async () => (await listed(request)).events.map((event: any) => event.delivery.state), { timeout: 10_000 }).toEqual(['failed', 'failed'])
  })

  test('a URL that is not http(s) is validation_failed; one with credentials is refused as personal data; neither is repeated', async ({ request }) => {
    for (const url of ['ftp://127.0.0.1/hooks', 'not a url']) {
      const error = await expectError(await request.post(WEBHOOK, { data: { url } }), 422, 'validation_failed')
      expect(error.details).toEqual([{ field: 'url', issue: 'must be an http or https URL' }])
    }
    const error = await expectError(await request.post(WEBHOOK, { data: { url: 'http://ann:secret@127.0.0.1/hooks' } }), 422, 'pii_not_allowed')
    expect(JSON.stringify(error)).not.toContain('secret')
  })
})

test.describe('where webhooks may go by default', () => {
  test('a sandbox others can reach delivers only to public addresses and says so at start-up; one on loopback delivers to this machine', async ({
    privateServer,
    playwright,
  }) => {
    const hooks = await receiver()
    // SANDBOX_WEBHOOK_TARGETS empty means its default (the suite's servers set it otherwise).
    const exposed = await privateServer('webhooks-exposed', { HOST: '0.0.0.0', SANDBOX_WEBHOOK_TARGETS: '' })
    expect(exposed.stdout()).toContain('"webhooks":"public addresses only (SANDBOX_WEBHOOK_TARGETS=any to deliver to this machine too)"')
    const outsider = await playwright.request.newContext({ baseURL: exposed.url })
    try {
      for (const url of [hooks.url, 'http://localhost:4000/hooks', 'http://169.254.169.254/latest/meta-data']) {
        expect((await expectError(await outsider.post(WEBHOOK, { data: { url } }), 422, 'validation_failed')).details).toEqual([
          { field: 'url', issue: expect.stringMatching(/this sandbox delivers only to public addresses/) },
        ])
      }
    } finally {
      await outsider.dispose()
    }
    // On loopback with no proxy in front (and its own file: a shared database means hosted, public
    // only whatever HOST says).
    const local = await privateServer('webhooks-local', { HOST: '127.0.0.1', SANDBOX_TRUST_PROXY: '0', SANDBOX_WEBHOOK_TARGETS: '' })
    const owner = await playwright.request.newContext({ baseURL: local.url })
    try {
      if (currentTarget() === 'pg') {
        expect(local.stdout()).toContain('"webhooks":"public addresses only')
        await expectError(await owner.post(WEBHOOK, { data: { url: hooks.url } }), 422, 'validation_failed')
        return
      }
      expect(local.stdout()).toContain('"webhooks":"any address, this machine included (SANDBOX_WEBHOOK_TARGETS=public for public ones only)"')
      await register(owner, hooks.url)
      await expectOk(await owner.post(`${WEBHOOK}/test`))
      await receivedAll(hooks, 1)
    } finally {
      await owner.dispose()
    }
  })
})

test.describe('webhooks on a hosted server (SANDBOX_WEBHOOK_TARGETS=public)', () => {
  test('loopback, private, link-local and reserved targets are refused, including a host name that resolves to one; so are other ports', async ({
    privateServer,
    playwright,
  }) => {
    const server = await privateServer('webhooks-public', { SANDBOX_WEBHOOK_TARGETS: 'public' })
    const client = await playwright.request.newContext({ baseURL: server.url })
    try {
      for (const url of [
        'http://127.0.0.1/hooks',
        'http://localhost/hooks',
        'http://10.1.2.3/hooks',
        'http://172.16.0.1/',
        'http://192.168.1.1/',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/hooks',
        'http://[fe80::1]/hooks',
        'http://[fd00::1]/',
        'http://[::ffff:127.0.0.1]/',
        'http://0.0.0.0/',
        'http://100.64.0.1/',
        'http://93.184.215.14:8080/hooks',
        'https://93.184.215.14:22/',
      ]) {
        const error = await expectError(await client.post(WEBHOOK, { data: { url } }), 422, 'validation_failed')
        expect(error.details![0]!.field, url).toBe('url')
      }
      // Nothing was registered.
      await expectError(await client.post(`${WEBHOOK}/test`), 409, 'webhook_not_registered')
    } finally {
      await client.dispose()
    }
  })
})

test.describe('event size', () => {
  test('200 corrections of one policy keep every event under 4 KB; read-back still answers all 200', async ({ privateServer, playwright }) => {
    test.setTimeout(120_000)
    const server = await privateServer('events-size', { SANDBOX_RATE_LIMIT: '1000' })
    const client = await playwright.request.newContext({ baseURL: server.url })
    try {
      const { policy } = await issuePolicy(client)
      for (let index = 1; index <= 200; index++) {
        await expectOk(await client.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_partner_reference', partner_reference: `BK-${index}` } }))
      }
      await expectOk(await client.post(API.cancel(policy.policy_ref)))
      const events: any[] = []
      for (let after: string | undefined; ; ) {
        const page = await listed(client, after ? { after } : {})
        events.push(...page.events)
        if (!page.has_more) break
        after = page.next_cursor
      }
      expect(events).toHaveLength(203) // issued, document.ready, 200 endorsed, cancelled
      // What is listed without `delivery` is the stored body, byte for byte.
      const sizes = events.map(({ delivery, ...body }) => Buffer.byteLength(JSON.stringify(body)))
      expect(Math.max(...sizes)).toBeLessThan(4096)
      expect(events.at(-2).data).toMatchObject({ endorsement_count: 200, endorsement: { sequence: 200, new_value: 'BK-200' } })
      expect(events.at(-1).data).toMatchObject({ status: 'cancelled', endorsement_count: 200 })
      expect((await expectOk(await client.post(API.read(policy.policy_ref)))).data.endorsements).toHaveLength(200)
    } finally {
      await client.dispose()
    }
  })
})

test.describe('deliveries survive a crash', () => {
  test('a server SIGKILLed with deliveries pending delivers them after its restart', async ({ privateServer, playwright }) => {
    test.setTimeout(90_000)
    const first = await privateServer('webhooks-crash')
    const client = await playwright.request.newContext({ baseURL: first.url })
    try {
      // The receiver is not up yet: the first attempts fail, the deliveries stay pending.
      const hooks = await receiver()
      await hooks.close()
      receivers = []
      await register(client, hooks.url)
      const { policy } = await issuePolicy(client)
      await first.stop('SIGKILL')

      const back = await receiver(hooks.url)
      const second = await privateServer('webhooks-crash', {}, { dbPath: first.dbPath })
      await receivedAll(back, 2, 45_000)
      expect(
        back
          .events()
          .map((event) => event.type)
          .sort(),
      ).toEqual(['document.ready', 'policy.issued'])
      expect(back.events().every((event) => event.data.policy_ref === policy.policy_ref)).toBe(true)
      void second
    } finally {
      await client.dispose()
    }
  })
})
