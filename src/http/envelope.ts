/**
 * @module The response envelope of spec 2.1, its `meta`, and the fair-use headers that repeat it.
 */
import type { RateStatus } from '../domain/rate-window'
import { isoTimestamp } from '../domain/dates'
import type { ApiError } from '../errors'
import type { FailureModel, MetaModel, ModeModel } from './envelope-model'

export type Mode = typeof ModeModel.static

/** What the pipeline knows about one request; handlers read it as `sandbox`. */
export interface RequestState {
  requestId: string
  startedAt: number
  /** The clock reading the request was admitted at; every write it makes is stamped with it. */
  admittedAt: number
  mode: Mode
  session: { id: number; ref: string; expiresAt: number } | null
  /** The session's cookie token, kept in memory only: it keys the hash of an Idempotency-Key. */
  sessionToken: string | null
  rate: RateStatus | null
  /** Milliseconds the answer waits before it is sent (`Sandbox-Delay-Ms`, http/delay.ts). */
  delayMs: number
}

export type Meta = typeof MetaModel.static
export type Failure = typeof FailureModel.static
export interface Success<T> extends Omit<Failure, 'ok' | 'error'> {
  ok: true
  data: T
}

function meta(state: RequestState, rate: RateStatus): Meta {
  return {
    sandbox: true,
    session_expires_at: state.session ? isoTimestamp(state.session.expiresAt) : null,
    rate_limit: { limit: rate.limit, remaining: rate.remaining, reset_at: isoTimestamp(rate.resetAt) },
  }
}

/** The success envelope. Only called after the rate check, so `rate` is known. */
export function success<T>(state: RequestState, data: T): Success<T> {
  return { ok: true, mode: state.mode, request_id: state.requestId, data, meta: meta(state, state.rate!) }
}

export function failure(state: RequestState, rate: RateStatus, error: ApiError): Failure {
  const { code, message, details } = error
  return {
    ok: false,
    mode: state.mode,
    request_id: state.requestId,
    error: details?.length ? { code, message, details } : { code, message },
    meta: meta(state, rate),
  }
}

/** The IETF draft headers (draft-ietf-httpapi-ratelimit-headers): quota, window, remaining, reset. */
export function rateLimitHeaders(rate: RateStatus, windowSeconds: number, now: number): Record<string, string> {
  const reset = Math.max(0, Math.ceil((rate.resetAt - now) / 1000))
  return {
    'ratelimit-policy': `"sandbox";q=${rate.limit};w=${windowSeconds}`,
    ratelimit: `"sandbox";r=${rate.remaining};t=${reset}`,
  }
}
