/**
 * @module The response envelope of spec 2.1, its `meta`, and the fair-use headers that repeat it.
 */
import type { RateStatus } from '../domain/rate-window'
import { isoTimestamp } from '../domain/dates'
import { clockView } from '../domain/session-clock'
import type { ApiError } from '../errors'
import type { FailureModel, MetaModel } from './envelope-model'
import type { RequestState } from './request-state'

export type Meta = typeof MetaModel.static
export type Failure = typeof FailureModel.static
export interface Success<T> extends Omit<Failure, 'ok' | 'error'> {
  ok: true
  data: T
}

function meta(state: RequestState, rate: RateStatus): Meta {
  const offset = state.session?.clockOffsetMs ?? 0
  return {
    sandbox: true,
    session_expires_at: state.session ? isoTimestamp(state.session.expiresAt) : null,
    rate_limit: { limit: rate.limit, remaining: rate.remaining, reset_at: isoTimestamp(rate.resetAt) },
    // Read at answer time: an advance answers with the clock it set.
    ...(offset > 0 && { session_clock: clockView(state.admittedAt, offset) }),
  }
}

/** The success envelope. Only called after the rate check, so `rate` is known. */
export function success<T>(state: RequestState, data: T): Success<T> {
  const answer: Success<T> = { ok: true, mode: state.mode, request_id: state.requestId, data, meta: meta(state, state.rate!) }
  state.answer = answer
  return answer
}

export function failure(state: RequestState, rate: RateStatus, error: ApiError): Failure {
  const { code, message, details } = error
  const answer: Failure = {
    ok: false,
    mode: state.mode,
    request_id: state.requestId,
    error: details?.length ? { code, message, details } : { code, message },
    meta: meta(state, rate),
  }
  state.answer = answer
  return answer
}

/** The IETF draft headers (draft-ietf-httpapi-ratelimit-headers): quota, window, remaining, reset. */
export function rateLimitHeaders(rate: RateStatus, windowSeconds: number, now: number): Record<string, string> {
  const reset = Math.max(0, Math.ceil((rate.resetAt - now) / 1000))
  return {
    'ratelimit-policy': `"sandbox";q=${rate.limit};w=${windowSeconds}`,
    ratelimit: `"sandbox";r=${rate.remaining};t=${reset}`,
  }
}
