/**
 * @module What the sandbox knows of each request in flight, from its first step to its log line.
 * Every step of the request (app.ts) reads and writes it here; handlers see it as `sandbox`.
 */
import type { RateStatus } from '../domain/rate-window'
import type { SessionRow } from '../storage/storage'
import type { ModeModel } from './envelope-model'

export type Mode = typeof ModeModel.static

/**
 * Why admission opened a session for a call that named none it could use: the call carried no
 * `sbx_session` cookie, or one this sandbox does not know (forged, changed, another sandbox's, or
 * of a session forgotten 24 hours after it ended). An ended session it still knows answers
 * `session_expired` instead, and opens none.
 */
export type ImplicitSession = 'no_cookie' | 'unknown_cookie'

export interface RequestState {
  requestId: string
  startedAt: number
  /** The client network's rate-limit counter key (http/client-address.ts). */
  network: string
  /** The clock reading the request was admitted at; every write it makes is stamped with it. */
  admittedAt: number
  mode: Mode
  session: SessionRow | null
  /** The session's cookie token, kept in memory only: it keys the hash of an Idempotency-Key. */
  sessionToken: string | null
  /** Set when admission opened a session for this call: a reference's "not found" then says why (http/session-hint.ts). */
  implicitSession: ImplicitSession | null
  rate: RateStatus | null
  /** Milliseconds the answer waits before it is sent (`Sandbox-Delay-Ms`, http/steps/testing-aids.ts). */
  delayMs: number
  /** The body as read, once it passed the personal-data rule (http/steps/request-body.ts): what the request log may keep. */
  loggedBody?: unknown
  /** The envelope answered (http/envelope.ts), for the request log. */
  answer?: unknown
  /** Its JSON text as sent (http/steps/access-log.ts): what the request log keeps of it. */
  answerText?: string
}

/** Keyed by the request itself: the state goes when the request does. */
const states = new WeakMap<Request, RequestState>()

export function beginRequest(request: Request, state: RequestState): RequestState {
  states.set(request, state)
  return state
}

/** The state of a request the first step has seen. */
export function stateOf(request: Request): RequestState {
  return states.get(request)!
}

/** The state of a request, or undefined for one that never reached the first step. */
export function maybeStateOf(request: Request): RequestState | undefined {
  return states.get(request)
}
