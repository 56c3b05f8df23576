/**
 * @module A session's business clock: wall time plus an offset that only grows. Everything about
 * the session's business reads it (today for a trip, refunds, cover, the times in answers and
 * events); infrastructure stays on wall time (the session's expiry, fair use, webhook retries and
 * signatures). Also what cover is at a given business time, and which cover events are due.
 */
import { ApiError, throwIfInvalid } from '../errors'
import { fromDayNumber, isoTimestamp, toDayNumber, toInstant, todayDayNumber } from './dates'
import type { Trip } from './trip'

const DAY_MS = 86_400_000

/** How far a session's clock may run ahead of wall time: two years, past the furthest trip (365 days ahead, 180 long). */
export const MAX_CLOCK_AHEAD_DAYS = 730

/** The session's business time at wall time `wallNow`. */
export const businessNow = (wallNow: number, session: { clockOffsetMs: number }) => wallNow + session.clockOffsetMs

/** The clock as answers show it. */
export function clockView(wallNow: number, offsetMs: number) {
  const now = wallNow + offsetMs
  return { now: isoTimestamp(now), today: fromDayNumber(todayDayNumber(now)), offset_seconds: Math.floor(offsetMs / 1000) }
}

/** Where to move the clock: by whole days, or to a date (its start, UTC) or an instant. */
export type Advance = { days: number } | { to: string }

/**
 * The new offset for `advance` from business time `now`, checked: forward only, and at most
 * `MAX_CLOCK_AHEAD_DAYS` ahead of wall time.
 */
export function advancedOffset(wallNow: number, offsetMs: number, advance: Advance): number {
  const now = wallNow + offsetMs
  const target = 'days' in advance ? now + advance.days * DAY_MS : instantOf(advance.to)
  if (target <= now) throw new ApiError('clock_backwards', { values: { now: isoTimestamp(now) } })
  if (target - wallNow > MAX_CLOCK_AHEAD_DAYS * DAY_MS) throw new ApiError('clock_too_far', { values: { maxDays: MAX_CLOCK_AHEAD_DAYS } })
  return target - wallNow
}

/** `YYYY-MM-DD` as the start of that day (UTC), else an ISO 8601 instant; one that is not a real date or time is refused. */
function instantOf(to: string): number {
  const day = toDayNumber(to)
  const instant = day !== null ? day * DAY_MS : toInstant(to)
  if (instant === null) throwIfInvalid([{ field: 'to', issue: 'must be a real date (YYYY-MM-DD) or ISO 8601 instant with its zone' }])
  return instant!
}

export const COVERAGE = ['upcoming', 'active', 'ended'] as const
export type Coverage = (typeof COVERAGE)[number]

/** Cover at business time `now`: before its start date, from it to its end date (both included), after; a cancelled policy's cover has ended. */
export function coverageAt(trip: Trip, cancelled: boolean, now: number): Coverage {
  const today = todayDayNumber(now)
  if (cancelled || today > toDayNumber(trip.end_date)!) return 'ended'
  return today < toDayNumber(trip.start_date)! ? 'upcoming' : 'active'
}

/** The cover events recorded so far: none, `policy.started`, or both. */
export type CoverageRecorded = 0 | 1 | 2

/** When cover starts (its start date's first instant, UTC) and ends (the instant after its end date). */
function boundaries(trip: Trip): [number, number] {
  return [toDayNumber(trip.start_date)! * DAY_MS, (toDayNumber(trip.end_date)! + 1) * DAY_MS]
}

/**
 * The cover events due by business time `now` that are not recorded yet, oldest first, each at its
 * boundary (but never before `issuedAt`: cover that started before the policy was issued starts at
 * its issue), and the business time the next one falls due (null: none is left).
 */
export function dueCoverage(trip: Trip, issuedAt: number, recorded: CoverageRecorded, now: number) {
  const at = boundaries(trip).map((boundary) => Math.max(boundary, issuedAt))
  const due: { type: 'policy.started' | 'policy.ended'; at: number }[] = []
  let next = recorded as number
  for (; next < 2 && at[next]! <= now; next++) due.push({ type: next === 0 ? 'policy.started' : 'policy.ended', at: at[next]! })
  return { due, recorded: next as CoverageRecorded, nextAt: next < 2 ? at[next]! : null }
}
