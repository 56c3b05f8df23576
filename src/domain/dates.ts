/** @module Calendar dates as `YYYY-MM-DD` strings in UTC, and whole-day arithmetic on them. */

const DAY_MS = 86_400_000
const DATE_SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/

/** Days since 1970-01-01 for a real calendar date, or `null` (`2026-02-30` is not a date). */
export function toDayNumber(date: string): number | null {
  const match = DATE_SHAPE.exec(date)
  if (!match) return null
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const ms = Date.UTC(year, month - 1, day)
  const parsed = new Date(ms)
  const real = parsed.getUTCFullYear() === year && parsed.getUTCMonth() === month - 1 && parsed.getUTCDate() === day
  return real ? ms / DAY_MS : null
}

export function fromDayNumber(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10)
}

/** Today's date in UTC, as a day number, for the given clock reading. */
export function todayDayNumber(nowMs: number): number {
  return Math.floor(nowMs / DAY_MS)
}

/** ISO 8601 UTC timestamp with milliseconds and `Z`, the contract's timestamp form. */
export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString()
}

const INSTANT_SHAPE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i

/**
 * Epoch ms of an RFC 3339 instant (a real date, a time, and `Z` or an offset), or `null`: a time
 * without its zone would be read in the server's, and `2026-02-30T…` would roll into March.
 */
export function toInstant(text: string): number | null {
  const match = INSTANT_SHAPE.exec(text)
  if (!match || toDayNumber(match[1]!) === null) return null
  if (Number(match[2]) > 23 || Number(match[3]) > 59 || Number(match[4]) > 59) return null
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? null : ms
}
