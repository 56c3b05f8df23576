/**
 * @module The hint on a reference's "not found" when the call opened a session of its own. Node's
 * fetch, generated clients and most HTTP libraries keep no cookies: each of their calls opens a new
 * session, in which no plan, policy or event of an earlier call resolves, and "not found" alone
 * sends the partner looking at the reference instead of at the cookie. The hint adds a sentence to
 * the message and one detail; status, code and headers stay as they are.
 */
import type { ApiError, ErrorCode, ErrorDetail } from '../errors'
import type { ImplicitSession } from './request-state'

/** The codes of a reference the session does not have: the ones a lost session explains. */
const REFERENCE_CODES: ReadonlySet<ErrorCode> = new Set(['plan_not_found', 'policy_not_found', 'event_not_found', 'request_not_found'])

const GUIDE = 'keep a cookie jar; the API guide\'s "Keeping the session cookie" (docs/api.md) shows how in fetch, axios, Python and Java'

/** The detail names the request header, as details on `Idempotency-Key` or `Sandbox-Outcome` do. */
const FIELD = 'Cookie'

export const SESSION_HINT: Record<ImplicitSession, { sentence: string; detail: ErrorDetail }> = {
  no_cookie: {
    sentence: `This call carried no session cookie (sbx_session), so it started a new session: send back the cookie the first call set (${GUIDE}).`,
    detail: { field: FIELD, issue: 'has no sbx_session, so this call started a new session, in which no plan, policy or event of another session resolves' },
  },
  unknown_cookie: {
    sentence:
      'This call carried a session cookie (sbx_session) this sandbox does not know, so it started a new session: ' +
      `send back the cookie the sandbox set, unchanged (${GUIDE}).`,
    detail: {
      field: FIELD,
      issue: 'has an sbx_session this sandbox does not know, so this call started a new session, in which no plan, policy or event of another session resolves',
    },
  },
}

/** The error as answered: with the hint when it is a reference's "not found" in a session this call opened. */
export function withSessionHint(error: ApiError, implicitSession: ImplicitSession | null): ApiError {
  if (implicitSession === null || !REFERENCE_CODES.has(error.code)) return error
  const { sentence, detail } = SESSION_HINT[implicitSession]
  return error.withAddition(sentence, detail)
}
