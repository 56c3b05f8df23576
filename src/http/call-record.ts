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
import { loggedMethod } from './paths'
import type { RequestState } from './request-state'

/** The most of a body or an answer the log keeps, as JSON text: longer ones are cut, and say so. */
const MAX_LOGGED_BYTES = 16 * 1024

const KNOWN_OUTCOMES: ReadonlySet<string> = new Set([...FORCED_OUTCOMES, ...BUSINESS_OUTCOMES])

/**
 * JSON text of `value`, cut to `MAX_LOGGED_BYTES` characters: a cut one is the JSON string of its
 * first part, flagged.
 */
function kept(value: unknown): { text: string; truncated: boolean } {
  const text = JSON.stringify(value) ?? 'null'
  if (text.length <= MAX_LOGGED_BYTES) return { text, truncated: false }
  return { text: JSON.stringify(text.slice(0, MAX_LOGGED_BYTES)), truncated: true }
}

/**
 * Answer fields shown to their caller once and never kept: the webhook's signing secret, and the
 * console link, whose token is stored only as its hash.
 */
const SHOWN_ONCE = ['secret', 'console_url'] as const

function withoutSecrets(answer: any): unknown {
  const data = answer?.data
  if (data === null || typeof data !== 'object' || !SHOWN_ONCE.some((field) => field in data)) return answer
  const redacted = { ...data }
  for (const field of SHOWN_ONCE) if (field in redacted) redacted[field] = '(not kept in the log)'
  return { ...answer, data: redacted }
}

/** The request's media type as sent (lowercase, without parameters), or a note when it is not one. */
function mediaType(request: Request): string | null {
  const header = request.headers.get('content-type')
  if (header === null) return null
  const type = header.split(';')[0]!.trim().toLowerCase()
  return /^[a-z0-9!#$&^_.+-]{1,64}\/[a-z0-9!#$&^_.+-]{1,64}$/.test(type) ? type : '(not a media type)'
}

// Where each body's JSON text goes in its entry: the bodies are its largest part, so they are
// stringified once, not again inside the entry.
const SENT = '\u0000sent'
const ANSWER = '\u0000answer'
const SENT_JSON = JSON.stringify(SENT)
const ANSWER_JSON = JSON.stringify(ANSWER)

/**
 * The entry's JSON with the bodies' text in place of their marks: the first sent mark (no text of
 * the caller's comes before it) and the last answer mark (none comes after it).
 */
function spliced(entry: string, sent: string, answer: string): string {
  const sentAt = entry.indexOf(SENT_JSON)
  const answerAt = entry.lastIndexOf(ANSWER_JSON)
  return entry.slice(0, sentAt) + sent + entry.slice(sentAt + SENT_JSON.length, answerAt) + answer + entry.slice(answerAt + ANSWER_JSON.length)
}

/** What the log keeps of the request's body: its JSON text, or a note. */
function requestBody(loggedBody: unknown, errorCode: string | null, answer: any, contentLength: string | null) {
  if (loggedBody !== undefined) {
    const { text, truncated } = kept(loggedBody)
    return { body: text, note: truncated ? `cut at ${MAX_LOGGED_BYTES} characters` : null }
  }
  if (errorCode === 'pii_not_allowed') {
    const fields = (answer?.error?.details ?? []).map((detail: { field: string }) => detail.field)
    return { body: 'null', note: `refused as personal data: not kept (fields: ${fields.join(', ')})` }
  }
  if (contentLength === null || contentLength === '0') return { body: 'null', note: null }
  return { body: 'null', note: `not kept (${errorCode ?? 'not read'})` }
}

/**
 * The call's entry in its session's log, or null when it belongs to no session. What the request
 * and its headers say is read now; the entry's text is built when it is first read, at its write:
 * a session calling fast has most of its calls pushed out of its newest 200 before that
 * (storage/sqlite/request-log.ts), and those are never stringified. Nothing changes a body or an
 * answer once it has been sent.
 */
export function callRecord(
  state: RequestState,
  request: Request,
  { path, status, durationMs }: { path: string; status: number; durationMs: number },
  headers: Record<string, unknown>,
): LoggedCall | null {
  if (!state.session) return null
  const answer = state.answer as any
  const errorCode: string | null = answer?.ok === false ? answer.error.code : null
  const outcome = request.headers.get(FORCED_OUTCOME_HEADER)
  const { loggedBody } = state
  const contentLength = request.headers.get('content-length')
  const fields = {
    request_id: state.requestId,
    at: isoTimestamp(state.admittedAt),
    method: loggedMethod(request.method),
    path,
    status,
    error_code: errorCode,
    duration_ms: durationMs,
    testing: {
      idempotency_key: request.headers.has('idempotency-key') ? (headers['idempotent-replayed'] === 'true' ? 'replayed' : 'sent') : null,
      sandbox_outcome: outcome === null ? null : KNOWN_OUTCOMES.has(outcome) ? outcome : '(not a known outcome)',
      sandbox_delay_ms: state.delayMs > 0 ? state.delayMs : null,
    },
    contentType: mediaType(request),
    answerType: answer === undefined ? String(headers['content-type'] ?? '') : 'application/json',
  }
  let entry: string | undefined
  const build = () => {
    const { contentType, answerType, ...logged } = fields
    const sent = requestBody(loggedBody, errorCode, answer, contentLength)
    const answered = answer === undefined ? { text: 'null', truncated: false } : kept(withoutSecrets(answer))
    const text = JSON.stringify({
      ...logged,
      request: { content_type: contentType, body: SENT, note: sent.note },
      answer: { content_type: answerType, body: ANSWER, truncated: answered.truncated },
    })
    return spliced(text, sent.body, answered.text)
  }
  return {
    sessionId: state.session.id,
    requestId: state.requestId,
    at: state.admittedAt,
    path,
    status,
    get entry() {
      entry ??= build()
      return entry
    },
  }
}
