/** @module A session's clock (domain/session-clock.ts): how it moves, what cover is at a time, which cover events are due. */
import { describe, expect, test } from 'bun:test'
import { advancedOffset, clockView, coverageAt, dueCoverage, MAX_CLOCK_AHEAD_DAYS } from '../../src/domain/session-clock'
import { recordDueCoverage } from '../../src/modules/policies/coverage'
import { inProcessApp, tripFrom } from './support/app'
import { refusal } from './support/errors'

const DAY = 86_400_000
const WALL = Date.parse('2026-11-27T10:30:00.000Z')
const trip = { origin_country: 'IN', destination_country: 'FR', start_date: '2026-12-10', end_date: '2026-12-14' }
const at = (iso: string) => Date.parse(iso)

describe('advancing', () => {
  test('by days keeps the time of day; to a date is its first instant (UTC); to an instant is that instant', () => {
    expect(advancedOffset(WALL, 0, { days: 3 })).toBe(3 * DAY)
    expect(advancedOffset(WALL, DAY, { days: 1 })).toBe(2 * DAY)
    expect(WALL + advancedOffset(WALL, 0, { to: '2026-12-01' })).toBe(at('2026-12-01T00:00:00.000Z'))
    expect(WALL + advancedOffset(WALL, 0, { to: '2026-12-01T08:15:00Z' })).toBe(at('2026-12-01T08:15:00.000Z'))
  })

  test('never back, nor to the same instant; at most two years ahead of wall time', () => {
    expect(refusal(() => advancedOffset(WALL, 5 * DAY, { to: '2026-12-01' }))).toMatchObject({ code: 'clock_backwards', status: 409 })
    expect(refusal(() => advancedOffset(WALL, 0, { to: new Date(WALL).toISOString() }))).toMatchObject({ code: 'clock_backwards' })
    expect(advancedOffset(WALL, 0, { days: MAX_CLOCK_AHEAD_DAYS })).toBe(MAX_CLOCK_AHEAD_DAYS * DAY)
    expect(refusal(() => advancedOffset(WALL, DAY, { days: MAX_CLOCK_AHEAD_DAYS }))).toMatchObject({ code: 'clock_too_far', status: 422 })
  })

  test('a date or instant that is not real is validation_failed', () => {
    for (const to of ['2026-02-30', '2026-13-01', 'tomorrow']) {
      expect(refusal(() => advancedOffset(WALL, 0, { to }))).toMatchObject({ code: 'validation_failed', fields: ['to'] })
    }
  })

  test('the clock as answers show it', () => {
    expect(clockView(WALL, 2 * DAY + 1500)).toEqual({ now: '2026-11-29T10:30:01.500Z', today: '2026-11-29', offset_seconds: 172_801 })
  })
})

describe('cover over time', () => {
  test('upcoming before the start date, active from it to the end date (both included), ended after it or once cancelled', () => {
    expect(coverageAt(trip, false, at('2026-12-09T23:59:59Z'))).toBe('upcoming')
    expect(coverageAt(trip, false, at('2026-12-10T00:00:00Z'))).toBe('active')
    expect(coverageAt(trip, false, at('2026-12-14T23:59:59Z'))).toBe('active')
    expect(coverageAt(trip, false, at('2026-12-15T00:00:00Z'))).toBe('ended')
    expect(coverageAt(trip, true, at('2026-12-01T00:00:00Z'))).toBe('ended')
  })

  test('the events due: each boundary once, in order, never before the issue; and when the next falls due', () => {
    const issued = at('2026-11-27T10:00:00Z')
    expect(dueCoverage(trip, issued, 0, at('2026-12-09T12:00:00Z'))).toEqual({ due: [], recorded: 0, nextAt: at('2026-12-10T00:00:00Z') })
    expect(dueCoverage(trip, issued, 0, at('2026-12-20T00:00:00Z'))).toEqual({
      due: [
        { type: 'policy.started', at: at('2026-12-10T00:00:00Z') },
        { type: 'policy.ended', at: at('2026-12-15T00:00:00Z') },
      ],
      recorded: 2,
      nextAt: null,
    })
    expect(dueCoverage(trip, issued, 1, at('2026-12-20T00:00:00Z')).due.map((event) => event.type)).toEqual(['policy.ended'])
    expect(dueCoverage(trip, issued, 2, at('2027-01-01T00:00:00Z'))).toEqual({ due: [], recorded: 2, nextAt: null })
    // Issued during its first day: cover starts at the issue.
    const sameDay = at('2026-12-10T09:00:00Z')
    expect(dueCoverage(trip, sameDay, 0, sameDay).due).toEqual([{ type: 'policy.started', at: sameDay }])
  })
})

/** An in-process app whose sessions last a week (long enough to see a trip end), a session in it, and issuing a policy there. */
async function weekLongSession() {
  const sandbox = await inProcessApp({ SANDBOX_SESSION_TTL_SECONDS: String(7 * 86_400) })
  const session = (await sandbox.call('session', {})).cookie!
  const issue = async (trip: ReturnType<typeof tripFrom>) => {
    const plan = (await sandbox.call('plans/search', { trip, travellers: [{ age: 30 }] }, { cookie: session })).body.data.plans[0].plan_id
    return (await sandbox.call('policy/new', { plan_id: plan, trip, travellers: [{ age: 30 }] }, { cookie: session })).body.data.policy_ref as string
  }
  return { sandbox, session, issue }
}

describe('cover events as wall time passes (the poll every process runs)', () => {
  test('each boundary reached is recorded once, after the policy.issued before it; a cancelled policy records none', async () => {
    const { sandbox, session, issue } = await weekLongSession()
    const kept = await issue(tripFrom(sandbox.now(), 1, 2))
    const cancelled = await issue(tripFrom(sandbox.now(), 1, 2))
    await sandbox.call(`policy/${cancelled}/cancel`, {}, { cookie: session })
    expect(await recordDueCoverage(sandbox.services)).toBe(0)
    sandbox.advance(2 * DAY)
    expect(await recordDueCoverage(sandbox.services)).toBe(1)
    expect(await recordDueCoverage(sandbox.services)).toBe(0)
    sandbox.advance(3 * DAY)
    expect(await recordDueCoverage(sandbox.services)).toBe(1)
    const listed = (await sandbox.call('events', {}, { cookie: session })).body.data.events as { type: string; data: { policy_ref: string } }[]
    expect(listed.filter((event) => event.data.policy_ref === kept).map((event) => event.type)).toEqual([
      'policy.issued',
      'document.ready',
      'policy.started',
      'policy.ended',
    ])
    expect(listed.filter((event) => event.data.policy_ref === cancelled).map((event) => event.type)).toEqual([
      'policy.issued',
      'document.ready',
      'policy.cancelled',
    ])
  })
})

describe('cover events after an advance, as wall time goes on', () => {
  test('due at the boundary on the session clock (wall time = boundary - offset); an extension moves the end', async () => {
    const { sandbox, session, issue } = await weekLongSession()
    const trip = tripFrom(sandbox.now(), 10, 2)
    const ref = await issue(trip)
    // Nine days ahead: cover starts within a day on the session's clock, ten days away in wall time.
    expect((await sandbox.call('test_helpers/clock/advance', { days: 9 }, { cookie: session })).body.data.recorded_events).toEqual([])
    const business = () => sandbox.now() + 9 * DAY
    const untilStart = at(`${trip.start_date}T00:00:00Z`) - business()
    expect(untilStart).toBeLessThan(DAY)
    sandbox.advance(untilStart - 1)
    expect(await recordDueCoverage(sandbox.services)).toBe(0)
    sandbox.advance(1)
    expect(await recordDueCoverage(sandbox.services)).toBe(1)
    // Extended by three days while active: it ends after the new end date, not the old one.
    const newEnd = new Date(at(`${trip.end_date}T00:00:00Z`) + 3 * DAY).toISOString().slice(0, 10)
    expect((await sandbox.call(`policy/${ref}/modify`, { scenario: 'extend_end_date', new_end_date: newEnd }, { cookie: session })).status).toBe(200)
    sandbox.advance(at(`${trip.end_date}T00:00:00Z`) + DAY - business())
    expect(await recordDueCoverage(sandbox.services)).toBe(0)
    sandbox.advance(at(`${newEnd}T00:00:00Z`) + DAY - business() - 1)
    expect(await recordDueCoverage(sandbox.services)).toBe(0)
    sandbox.advance(1)
    expect(await recordDueCoverage(sandbox.services)).toBe(1)
    const types = ((await sandbox.call('events', {}, { cookie: session })).body.data.events as { type: string }[]).map((event) => event.type)
    expect(types).toEqual(['policy.issued', 'document.ready', 'policy.started', 'policy.endorsed', 'policy.ended'])
  })
})
