/**
 * @module A call as the session's request log keeps it (modules/request-log/): what was sent and
 * what was answered, with the testing headers, and nothing the personal-data rule refuses. A body is
 * kept only once it passed that rule (http/steps/request-body.ts); one refused for personal data
 * leaves only the field paths its error names, and one that could not be read (not JSON, too large,
 * another media type) leaves a note, never its text. Path segments that are not our own words or
 * references are placeholders, as in the access log.
 */
import { BUSINESS_OUTCOMES } from '../domain/business-outcomes'
import { isoTimestamp } from '../domain/dates'
import type { LoggedCall } from '../storage/storage'
import { FORCED_OUTCOME_HEADER, FORCED_OUTCOMES } from './forced-outcome'
import { loggedMethod, loggedPath, pathOf } from './paths'
import type { RequestState } from './request-state'

/** The most of a body or an answer the log keeps, as JSON text: longer ones are cut, and say so. */
export const MAX_LOGGED_BYTES = 16 * 1024

const KNOWN_OUTCOMES: ReadonlySet<string> = new Set([...FORCED_OUTCOMES, ...BUSINESS_OUTCOMES])

/** JSON text of `value`, cut to `MAX_LOGGED_BYTES` (a cut one is a string, flagged). */
function kept(value: unknown): { json: unknown; truncated: boolean } {
  const text = JSON.stringify(value)
  if (text === undefined || text.length <= MAX_LOGGED_BYTES) return { json: value ?? null, truncated: false }
  return { json: text.slice(0, MAX_LOGGED_BYTES), truncated: true }
}

/** What the log keeps of the request's body. */
function requestBody(state: RequestState, request: Request, errorCode: string | null, answer: any) {
  if (state.loggedBody !== undefined) return { body: kept(state.loggedBody).json, note: null }
  if (errorCode === 'pii_not_allowed') {
    const fields = (answer?.error?.details ?? []).map((detail: { field: string }) => detail.field)
    return { body: null, note: `refused as personal data: not kept (fields: ${fields.join(', ')})` }
  }
  const length = request.headers.get('content-length')
  if (length === null || length === '0') return { body: null, note: null }
  return { body: null, note: `not read as JSON (${errorCode ?? 'not read'}): not kept` }
}

/** The call's entry in its session's log, or null when it belongs to no session. */
export function callRecord(state: RequestState, request: Request, status: number, headers: Record<string, unknown>): LoggedCall | null {
  if (!state.session) return null
  const answer = state.answer as any
  const errorCode: string | null = answer?.ok === false ? answer.error.code : null
  const outcome = request.headers.get(FORCED_OUTCOME_HEADER)
  const path = loggedPath(pathOf(request.url))
  const sent = requestBody(state, request, errorCode, answer)
  const answered = answer === undefined ? { json: null, truncated: false } : kept(answer)
  const entry = {
    request_id: state.requestId,
    at: isoTimestamp(state.admittedAt),
    method: loggedMethod(request.method),
    path,
    status,
    error_code: errorCode,
    duration_ms: Math.round((performance.now() - state.startedAt) * 100) / 100,
    testing: {
      idempotency_key: request.headers.has('idempotency-key') ? (headers['idempotent-replayed'] === 'true' ? 'replayed' : 'sent') : null,
      sandbox_outcome: outcome === null ? null : KNOWN_OUTCOMES.has(outcome) ? outcome : '(not a known outcome)',
      sandbox_delay_ms: state.delayMs > 0 ? state.delayMs : null,
    },
    request: { content_type: request.headers.get('content-type') === null ? null : 'application/json', body: sent.body, note: sent.note },
    answer:
      answer === undefined
        ? { content_type: String(headers['content-type'] ?? ''), body: null, truncated: false }
        : { content_type: 'application/json', body: answered.json, truncated: answered.truncated },
  }
  return { sessionId: state.session.id, requestId: state.requestId, at: state.admittedAt, path, status, entry: JSON.stringify(entry) }
}
