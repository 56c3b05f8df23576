/**
 * A session's clock (test helpers), on every target: advanced into a trip, a cancel is pro rata;
 * past its end, `none_after_end`; cover's start and end arrive as signed events, once each, in
 * order; other sessions, the session's expiry and the fair-use window stay on real time; two
 * PostgreSQL instances see one clock; the insurer's cancellation and reissue make their events. On
 * `uat` a session holding an insurer-issued policy cannot move its clock (the insurer's cannot).
 */
import { verifyWebhook } from '../../src/modules/events/signature'
import {
  addDays,
  ages,
  API,
  call,
  expect,
  expectError,
  expectOk,
  issuePolicy,
  openSession,
  searchBody,
  test,
  tripFrom,
  uniqueNetwork,
  type PrivateServer,
} from './support/client'
import { startReceiver, type Receiver } from './support/receiver'
import { currentTarget, scratchDatabase } from './support/server'
import { engine } from './support/store'

const CLOCK = '/api/sandbox/test_helpers/clock'
const ADVANCE = '/api/sandbox/test_helpers/clock/advance'
const insurerCancel = (ref: string) => `/api/sandbox/test_helpers/policy/${ref}/insurer_cancel`
const reissue = (ref: string) => `/api/sandbox/test_helpers/policy/${ref}/reissue_certificate`
const DAY_MS = 86_400_000
const realToday = () => new Date().toISOString().slice(0, 10)

type Client = Parameters<typeof issuePolicy>[0]

let receivers: Receiver[] = []
test.afterEach(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()))
  receivers = []
})

/** A receiver registered as the session's webhook; answers it and the secret. */
async function registeredReceiver(client: Client) {
  const hooks = await startReceiver()
  receivers.push(hooks)
  const { secret } = (await expectOk(await client.post(API.webhook, { data: { url: hooks.url } }))).data
  return { hooks, secret: secret as string }
}

const advance = async (client: Client, body: object) => (await expectOk(await client.post(ADVANCE, { data: body }))).data
const preview = async (client: Client, ref: string) => (await expectOk(await client.post(API.cancel(ref), { data: { preview: true } }))).data
const read = async (client: Client, ref: string) => (await expectOk(await client.post(API.read(ref)))).data

/** The session's events, oldest first (one page: these tests make few). */
async function events(client: Client) {
  return (await expectOk(await client.post('/api/sandbox/events', { data: {} }))).data.events as { id: string; type: string; created_at: string; data: any }[]
}

const simulationOnly = () =>
  test.skip(currentTarget() === 'uat', "uat: its policies come from the test insurer, whose clock cannot move (the last test checks it's refused)")

test.describe('the session clock', () => {
  test('a trip for next month: advanced into it, the cancel is pro rata; past its end, none_after_end; cover events listed in order, pushed signed and once each', async ({
    request,
  }) => {
    simulationOnly()
    const { hooks, secret } = await registeredReceiver(request)
    const into = await issuePolicy(request, { trip: tripFrom(30, 9), travellers: ages(40) })
    const past = await issuePolicy(request, { trip: tripFrom(30, 4), travellers: ages(40) })
    expect(into.policy.coverage).toBe('upcoming')

    // Into both trips: each policy.started, in date order (same date: issue order).
    const moved = await advance(request, { days: 33 })
    expect(moved.offset_seconds).toBe(33 * 86_400)
    expect(moved.today).toBe(addDays(into.trip.start_date, 3))
    expect(moved.recorded_events.map((event: { type: string; policy_ref: string }) => [event.type, event.policy_ref])).toEqual([
      ['policy.started', into.policy.policy_ref],
      ['policy.started', past.policy.policy_ref],
    ])
    const refund = await preview(request, into.policy.policy_ref)
    expect(refund.refund).toMatchObject({ rule: 'pro_rata_unused_days', unused_days: 6, cover_days: 10 })
    expect(refund.refund.amount).toBe(Math.floor((into.policy.premium * 100 * 6) / 10) / 100)
    const cancelled = await expectOk(await request.post(API.cancel(into.policy.policy_ref)))
    expect(cancelled.data.refund).toEqual(refund.refund)
    expect(cancelled.data.cancelled_at.slice(0, 10)).toBe(moved.today) // business time in answers
    expect(cancelled.meta.session_clock).toMatchObject({ today: moved.today, offset_seconds: 33 * 86_400 })
    expect((await read(request, past.policy.policy_ref)).coverage).toBe('active')

    // Past the second trip's end: policy.ended; nothing back; the cancelled policy records no end.
    const after = await advance(request, { to: addDays(past.trip.end_date, 2) })
    expect(after.recorded_events.map((event: { type: string }) => event.type)).toEqual(['policy.ended'])
    expect((await read(request, past.policy.policy_ref)).coverage).toBe('ended')
    expect((await preview(request, past.policy.policy_ref)).refund).toMatchObject({ rule: 'none_after_end', amount: 0 })

    const started = (ref: string) => `policy.started ${ref}`
    const ended = (ref: string) => `policy.ended ${ref}`
    const cover = (list: { type: string; data: any }[]) =>
      list.filter((event) => event.type === 'policy.started' || event.type === 'policy.ended').map((event) => `${event.type} ${event.data.policy_ref}`)
    const listed = await events(request)
    expect(cover(listed)).toEqual([started(into.policy.policy_ref), started(past.policy.policy_ref), ended(past.policy.policy_ref)])
    const endedEvent = listed.find((event) => event.type === 'policy.ended')!
    expect(endedEvent.created_at).toBe(`${addDays(past.trip.end_date, 1)}T00:00:00.000Z`) // when cover ended, on the session's clock
    expect(endedEvent.data.coverage).toBe('ended')

    // Pushed: each once, signed, the same events (type and policy) the list shows; in any order, since two
    // deliveries to an endpoint may be out at once (docs/api.md).
    await expect.poll(() => cover(hooks.events()).length, { timeout: 20_000 }).toBe(3)
    expect(cover(hooks.events()).sort()).toEqual(cover(listed).sort())
    for (const delivery of hooks.received) expect(verifyWebhook(secret, delivery.headers['sandbox-signature'] as string, delivery.body)).toBe(true)
    // The signature's t is real time: receivers compare it with their own clock.
    const t = Number(/t=(\d+)/.exec(hooks.received.at(-1)!.headers['sandbox-signature'] as string)![1])
    expect(Math.abs(t * 1000 - Date.now())).toBeLessThan(60_000)
  })

  test("a session's clock leaves another session's answers unchanged; its today is what trip dates are checked against", async ({ request, newClient }) => {
    simulationOnly()
    await advance(request, { days: 40 })
    const other = await newClient()
    const otherClock = (await expectOk(await other.post(CLOCK))).data
    expect(otherClock.offset_seconds).toBe(0)
    expect(otherClock.today).toBe(realToday())
    const otherSearch = await expectOk(await other.post(API.search, { data: searchBody({ ...tripFrom(0, 5) }) }))
    expect(otherSearch.meta.session_clock).toBeUndefined()
    // A start date that is real today is in the advanced session's past.
    const refused = await expectError(await request.post(API.search, { data: searchBody(tripFrom(0, 5)) }), 422, 'validation_failed')
    expect(refused.details).toEqual([{ field: 'trip.start_date', issue: 'must not be before today (UTC)' }])
    await expectOk(await request.post(API.search, { data: searchBody(tripFrom(41, 5)) }))
  })

  test('backwards, malformed and too far are refused with their own codes; nothing moves', async ({ request }) => {
    const clock = (await expectOk(await request.post(CLOCK))).data
    for (const body of [{}, { days: 0 }, { days: 1.5 }, { days: '1' }, { days: 1, to: '2030-01-01' }, { to: '2030-02-30' }, { to: 'tomorrow' }, { weeks: 1 }]) {
      await expectError(await request.post(ADVANCE, { data: body }), 422, 'validation_failed')
    }
    const back = await expectError(await request.post(ADVANCE, { data: { to: '2020-01-01' } }), 409, 'clock_backwards')
    expect(back.message).toContain(clock.today)
    await expectError(await request.post(ADVANCE, { data: { to: new Date(Date.now() + 731 * DAY_MS).toISOString() } }), 422, 'clock_too_far')
    await expectError(await request.post(ADVANCE, { data: { days: 731 } }), 422, 'clock_too_far')
    await advance(request, { days: 700 })
    await expectError(await request.post(ADVANCE, { data: { days: 31 } }), 422, 'clock_too_far')
    expect((await expectOk(await request.post(CLOCK))).data.offset_seconds).toBe(700 * 86_400)
  })

  test("the session's expiry and the fair-use window stay on real time", async ({ privateServer }) => {
    simulationOnly()
    const server = await privateServer('clock-expiry', { SANDBOX_SESSION_TTL_SECONDS: '6', SANDBOX_RATE_LIMIT: '8' })
    const network = uniqueNetwork()
    const opened = await call(server.url, API.session, { network })
    const { expires_at: expiresAt } = (await expectOk(opened)).data
    const cookie = opened.token!
    const moved = await call(server.url, ADVANCE, { network, cookie, body: { days: 400 } })
    const answer = await expectOk(moved)
    expect(answer.meta.session_expires_at).toBe(expiresAt)
    expect(Date.parse(answer.meta.rate_limit.reset_at)).toBeLessThan(Date.now() + 11 * 60_000)
    expect(answer.meta.rate_limit.remaining).toBe(6) // two calls counted
    // The call after the advance is counted in the same real-time window: the clock moved, the window did not.
    const after = await expectOk(await call(server.url, CLOCK, { network, cookie }))
    expect(after.meta.session_clock.offset_seconds).toBe(400 * 86_400)
    expect(after.meta.rate_limit.remaining).toBe(5)
    expect(after.meta.rate_limit.reset_at).toBe(answer.meta.rate_limit.reset_at)
    expect(after.meta.session_expires_at).toBe(expiresAt)
    await expect
      .poll(async () => (await call(server.url, CLOCK, { network, cookie })).json?.error?.code, { timeout: 15_000, intervals: [500] })
      .toBe('session_expired')
  })

  test("the insurer's cancellation and reissue each answer and record what the real change would", async ({ request }) => {
    simulationOnly()
    const { policy } = await issuePolicy(request, { trip: tripFrom(20, 6), travellers: ages(30) })
    const reissued = (await expectOk(await request.post(reissue(policy.policy_ref)))).data
    expect(reissued.documents[0]).toMatchObject({ state: 'ready', version: 2 })
    const cancelled = (await expectOk(await request.post(insurerCancel(policy.policy_ref)))).data
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelled_by: 'insurer', refund: { rule: 'full_insurer_cancellation', amount: policy.premium } })
    await expectError(await request.post(insurerCancel(policy.policy_ref)), 409, 'policy_cancelled')
    await expectError(await request.post(reissue(policy.policy_ref)), 409, 'policy_cancelled')
    await expectError(await request.post(API.cancel(policy.policy_ref)), 409, 'policy_cancelled')
    const listed = await events(request)
    expect(listed.map((event) => event.type)).toEqual(['policy.issued', 'document.ready', 'document.ready', 'policy.cancelled'])
    expect(listed[2]!.data.documents[0].version).toBe(2)
    expect(listed[3]!.data.cancellation).toMatchObject({ cancelled_by: 'insurer', refund: { rule: 'full_insurer_cancellation' } })
    expect((await read(request, policy.policy_ref)).cancellation.cancelled_by).toBe('insurer')
    await expectError(await request.post(insurerCancel('pol_sbx_00000000000000000000')), 404, 'policy_not_found')
  })

  test('uat: a session holding a policy the test insurer issued cannot move its clock; a session whose clock moved is quoted by simulation', async ({
    request,
    newClient,
  }) => {
    test.skip(currentTarget() !== 'uat', 'uat only: the other targets issue simulation policies')
    const { policy } = await issuePolicy(request)
    expect(policy.coverage).toBe('upcoming')
    await expectError(await request.post(ADVANCE, { data: { days: 1 } }), 409, 'clock_not_movable')
    await expectError(await request.post(insurerCancel(policy.policy_ref)), 409, 'insurer_side_unavailable')
    expect((await expectOk(await request.post(CLOCK))).data.offset_seconds).toBe(0)

    // A plan the insurer quoted before the clock moved is not issued after: the insurer's clock did not move.
    const other = await newClient()
    const trip = tripFrom(30, 5)
    const quoted = await expectOk(await other.post(API.search, { data: searchBody(trip) }))
    expect(quoted.mode).toBe('uat_gateway')
    await advance(other, { days: 1 })
    const stale = { plan_id: quoted.data.plans[0].plan_id, trip, travellers: ages(30) }
    await expectError(await other.post(API.issue, { data: stale }), 409, 'clock_not_movable')
    // Searching again is answered by simulation, and its policies follow the session's clock.
    // (Read as they are: expectOk holds a uat server's answers to uat_gateway.)
    const answered = async (response: Awaited<ReturnType<Client['post']>>): Promise<any> => {
      expect(response.status()).toBe(200)
      return response.json()
    }
    const simulated = await answered(await other.post(API.search, { data: searchBody(trip) }))
    expect(simulated.mode).toBe('simulation')
    const issued = await answered(await other.post(API.issue, { data: { ...stale, plan_id: simulated.data.plans[0].plan_id } }))
    expect(issued).toMatchObject({ ok: true, mode: 'simulation', data: { coverage: 'upcoming' } })
    await advance(other, { days: 30 })
  })

  test('a trip that starts today records policy.started right after policy.issued', async ({ request }) => {
    simulationOnly()
    const { policy } = await issuePolicy(request, { trip: tripFrom(0, 3) })
    expect(policy.coverage).toBe('active')
    expect((await events(request)).map((event) => event.type)).toEqual(['policy.issued', 'document.ready', 'policy.started'])
  })
})

test.describe('the session clock on two PostgreSQL instances', () => {
  test.skip(() => engine() !== 'postgres', 'two instances share a PostgreSQL database: pg only')

  /** Two instances on one fresh database. */
  async function twoInstances(privateServer: (name: string, env?: Record<string, string>, options?: { dbPath?: string }) => Promise<PrivateServer>) {
    const dbPath = scratchDatabase('clock-two')
    return Promise.all([privateServer('clock-two', {}, { dbPath }), privateServer('clock-two', {}, { dbPath })])
  }

  test('advancing on one instance is seen by the other; concurrent advances record each cover event once', async ({ privateServer }) => {
    const [a, b] = await twoInstances(privateServer)
    const { cookie, network } = await openSession(a!.url, b!.url, searchBody(tripFrom(5, 3), ages(30)))
    const issued: string[] = []
    for (const [offset, days] of [
      [5, 3],
      [12, 6],
      [20, 2],
      [40, 9],
    ] as const) {
      const trip = tripFrom(offset, days)
      const search = await expectOk(await call(b!.url, API.search, { network, cookie, body: searchBody(trip) }))
      const body = { plan_id: search.data.plans[0].plan_id, trip, travellers: ages(30) }
      issued.push((await expectOk(await call(a!.url, API.issue, { network, cookie, body }))).data.policy_ref)
    }
    // Both instances advance at once: one waits for the other (days count from the clock as it is), and
    // each boundary passed is recorded once.
    const both = await Promise.all([
      call(a!.url, ADVANCE, { network, cookie, body: { days: 15 } }),
      call(b!.url, ADVANCE, { network, cookie, body: { days: 30 } }),
    ])
    for (const reply of both) await expectOk(reply)
    expect((await expectOk(await call(b!.url, CLOCK, { network, cookie }))).data.offset_seconds).toBe(45 * 86_400)
    await expectOk(await call(a!.url, ADVANCE, { network, cookie, body: { days: 20 } }))
    expect((await expectOk(await call(b!.url, CLOCK, { network, cookie }))).data.offset_seconds).toBe(65 * 86_400)
    const listed = (await expectOk(await call(b!.url, '/api/sandbox/events', { network, cookie, body: {} }))).data.events as any[]
    const cover = listed.filter((event) => event.type === 'policy.started' || event.type === 'policy.ended')
    expect(cover).toHaveLength(8)
    for (const ref of issued)
      expect(cover.filter((event) => event.data.policy_ref === ref).map((event) => event.type)).toEqual(['policy.started', 'policy.ended'])
    // In date order, as recorded.
    const times = cover.map((event) => Date.parse(event.created_at))
    expect(times).toEqual([...times].sort((x, y) => x - y))
  })
})
