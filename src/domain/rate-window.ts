/**
 * @module Rolling-window arithmetic for the fair-use limit. Each admitted request counts for one
 * window against every counter it passed, so no counter admits more than `limit` in any window.
 */

/** One counter's requests still inside the window, before the current request. */
export interface CounterReading {
  used: number
  /** When the oldest of them was admitted (ms), or null when `used` is 0. */
  oldestAt: number | null
}

export interface RateStatus {
  admitted: boolean
  limit: number
  remaining: number
  /** When `remaining` next grows (ms): the oldest counted request of the binding counter expires. */
  resetAt: number
  /** Whole seconds until `resetAt`, for `Retry-After`; set only when refused. */
  retryAfter?: number
}

export interface WindowPolicy {
  limit: number
  windowMs: number
}

/** Decides one request against all of its counters: admitted only if every counter has room. */
export function decide(readings: CounterReading[], policy: WindowPolicy, now: number): RateStatus {
  const { limit, windowMs } = policy
  const full = readings.filter((reading) => reading.used >= limit)
  if (full.length > 0) {
    const resetAt = Math.max(...full.map((reading) => (reading.oldestAt ?? now) + windowMs))
    return { admitted: false, limit, remaining: 0, resetAt, retryAfter: Math.max(1, Math.ceil((resetAt - now) / 1000)) }
  }
  return {
    admitted: true,
    limit,
    ...binding(
      readings.map((r) => ({ used: r.used + 1, oldestAt: r.oldestAt ?? now })),
      policy,
      now,
    ),
  }
}

/** The allowance left without counting a request (for answers refused before the rate check). */
export function peek(readings: CounterReading[], policy: WindowPolicy, now: number): RateStatus {
  return { admitted: false, limit: policy.limit, ...binding(readings, policy, now) }
}

function binding(readings: CounterReading[], { limit, windowMs }: WindowPolicy, now: number) {
  let remaining = limit
  let resetAt = now
  for (const reading of readings) {
    const left = limit - reading.used
    const reset = reading.oldestAt === null ? now : reading.oldestAt + windowMs
    if (left < remaining || (left === remaining && reset > resetAt)) {
      remaining = left
      resetAt = reset
    }
  }
  return { remaining, resetAt }
}

/** A window for people: `10 minutes`, `1 hour`, `4 seconds` (never `0.0666… minutes`). */
export function spokenDuration(seconds: number): string {
  const [amount, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second']
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`
}
