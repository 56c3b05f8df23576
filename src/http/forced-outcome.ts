/**
 * @module Forced outcomes: the request header `Sandbox-Outcome: <code>` makes a call fail as that
 * failure would (status, envelope, `Retry-After`), so that partners can test the failures they
 * cannot cause on demand. It is checked once the call is admitted and counted, before the body is
 * read: the forced failure answers whatever the body, and nothing is read, stored or changed.
 * Business outcomes (an insurer's decline, a price change at bind, a late certificate) are answered
 * by the operation itself, where the real case arises: after every check of the body and references
 * (domain/business-outcomes.ts).
 */
import type { Config } from '../config'
import type { RateStatus } from '../domain/rate-window'
import { ApiError } from '../errors'
import { BUSINESS_OUTCOMES, isBusinessOutcome, type BusinessOutcome } from '../domain/business-outcomes'
import { PATHS } from './paths'

export const FORCED_OUTCOME_HEADER = 'sandbox-outcome'

export const FORCED_OUTCOMES = ['upstream_unavailable', 'upstream_invalid', 'storage_unavailable', 'internal_error', 'session_expired', 'rate_limited'] as const
export type ForcedOutcome = (typeof FORCED_OUTCOMES)[number]

/** Failures every endpoint can meet: the allowance, the database, our own bugs. */
const ANYWHERE = ['rate_limited', 'storage_unavailable', 'internal_error'] as const satisfies ForcedOutcome[]

/**
 * Each endpoint and the failures it can really answer. Explicit session creation ignores the
 * cookie, so it never answers `session_expired`; a search falls back to the catalogue when the
 * insurer is down, so only issue, modify and cancel answer `upstream_unavailable`; read-back, the
 * certificate, events and the test helpers never call the insurer.
 */
export const FORCED_OUTCOMES_AT = {
  [PATHS.session]: ANYWHERE,
  [PATHS.search]: [...ANYWHERE, 'session_expired', 'upstream_invalid'],
  [PATHS.issue]: [...ANYWHERE, 'session_expired', 'upstream_unavailable', 'upstream_invalid', ...BUSINESS_OUTCOMES],
  [PATHS.modify]: [...ANYWHERE, 'session_expired', 'upstream_unavailable', 'upstream_invalid'],
  [PATHS.cancel]: [...ANYWHERE, 'session_expired', 'upstream_unavailable', 'upstream_invalid'],
  [PATHS.read]: [...ANYWHERE, 'session_expired'],
  [PATHS.certificate]: [...ANYWHERE, 'session_expired'],
  [PATHS.events]: [...ANYWHERE, 'session_expired'],
  [PATHS.resend]: [...ANYWHERE, 'session_expired'],
  [PATHS.webhook]: [...ANYWHERE, 'session_expired'],
  [PATHS.webhookTest]: [...ANYWHERE, 'session_expired'],
  [PATHS.clock]: [...ANYWHERE, 'session_expired'],
  [PATHS.advanceClock]: [...ANYWHERE, 'session_expired'],
  [PATHS.insurerCancel]: [...ANYWHERE, 'session_expired'],
  [PATHS.reissueCertificate]: [...ANYWHERE, 'session_expired'],
  [PATHS.requestLog]: [...ANYWHERE, 'session_expired'],
  [PATHS.requestLogEntry]: [...ANYWHERE, 'session_expired'],
  [PATHS.policies]: [...ANYWHERE, 'session_expired'],
  [PATHS.console]: [...ANYWHERE, 'session_expired'],
} as const satisfies Record<string, readonly (ForcedOutcome | BusinessOutcome)[]>

export type Route = keyof typeof FORCED_OUTCOMES_AT

/** The failure as the sandbox answers it for real; `Retry-After` figures as the real one would give them. */
function failureOf(outcome: ForcedOutcome, rate: RateStatus, now: number, config: Config): ApiError {
  switch (outcome) {
    case 'upstream_unavailable':
      // As when the breaker has just opened: the cooldown (60 s, as with no gateway, when none is configured).
      return new ApiError(outcome, { variant: 'notAnswering', retryAfter: config.uat?.breakerCooldownSeconds ?? 60, forced: true })
    case 'upstream_invalid':
      return new ApiError(outcome, { forced: true })
    case 'storage_unavailable':
      return new ApiError(outcome, { retryAfter: 5, forced: true })
    case 'internal_error':
      return new ApiError(outcome, { forced: true })
    case 'session_expired':
      return new ApiError(outcome, { variant: 'ended', forced: true })
    case 'rate_limited':
      // Until the binding counter next grows, as a real refusal says; this call itself was counted.
      return new ApiError(outcome, {
        values: { limit: rate.limit, windowSeconds: config.rateWindowSeconds, byDefault: config.rateLimitByDefault },
        retryAfter: Math.max(1, Math.ceil((rate.resetAt - now) / 1000)),
        forced: true,
      })
  }
}

/**
 * The answer the header asks for on this route, or undefined without the header. A value that is
 * not a forced outcome of this route answers `validation_failed` (the value is never repeated).
 */
export function forcedFailure(header: string | null, route: string, rate: RateStatus, now: number, config: Config): ApiError | undefined {
  if (header === null) return undefined
  const allowed: readonly (ForcedOutcome | BusinessOutcome)[] = FORCED_OUTCOMES_AT[route as Route] ?? []
  const outcome = allowed.find((code) => code === header)
  if (!outcome) {
    return new ApiError('validation_failed', {
      variant: 'fields',
      details: [{ field: 'Sandbox-Outcome', issue: `must be one of: ${allowed.join(', ')}` }],
    })
  }
  return isBusinessOutcome(outcome) ? undefined : failureOf(outcome, rate, now, config)
}
