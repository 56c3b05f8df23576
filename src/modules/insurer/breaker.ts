/**
 * @module A circuit breaker for the insurer: after `failures` calls in a row fail, calls are refused
 * at once for `cooldownMs`; then one trial call is let through, and its outcome closes or reopens it.
 */

export type BreakerState = 'closed' | 'open' | 'half_open'

export function circuitBreaker(options: { failures: number; cooldownMs: number; clock: () => number }) {
  let failedInARow = 0
  let openedAt: number | null = null
  let trialInFlight = false

  const state = (): BreakerState => {
    if (openedAt === null) return 'closed'
    return options.clock() - openedAt >= options.cooldownMs ? 'half_open' : 'open'
  }

  return {
    state,
    /** Whether a call may go out now; in half-open state only one trial at a time. */
    allow(): boolean {
      const now = state()
      if (now === 'closed') return true
      if (now === 'open' || trialInFlight) return false
      trialInFlight = true
      return true
    },
    succeeded(): void {
      failedInARow = 0
      openedAt = null
      trialInFlight = false
    },
    failed(): void {
      failedInARow++
      trialInFlight = false
      if (openedAt !== null || failedInARow >= options.failures) openedAt = options.clock()
    },
    /** Whole seconds until a trial call may go out (at least 1). */
    retryAfter(): number {
      if (openedAt === null) return 1
      return Math.max(1, Math.ceil((openedAt + options.cooldownMs - options.clock()) / 1000))
    },
  }
}
