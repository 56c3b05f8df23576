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

/** A body or an answer as the entry keeps it: its JSON text, cut to `MAX_LOGGED_BYTES`. */
interface Kept {
  text: string
  truncated: boolean
}

/**
 * JSON `text` cut to `MAX_LOGGED_BYTES` characters: a cut one is the JSON string of its first part,
 * flagged.
 */
function cut(text: string): Kept {
  if (text.length <= MAX_LOGGED_BYTES) return { text, truncated: false }
  return { text: JSON.stringify(text.slice(0, MAX_LOGGED_BYTES)), truncated: true }
}

const kept = (value: unknown): Kept => cut(JSON.stringify(value) ?? 'null')

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
function requestBody(loggedBody: unknown, errorCode: string | null, answer: any, request: Request) {
  if (loggedBody !== undefined) {
    const { text, truncated } = kept(loggedBody)
    return { body: text, note: truncated ? `cut at ${MAX_LOGGED_BYTES} characters` : null }
  }
  if (errorCode === 'pii_not_allowed') {
    const fields = (answer?.error?.details ?? []).map((detail: { field: string }) => detail.field)
    return { body: 'null', note: `refused as personal data: not kept (fields: ${fields.join(', ')})` }
  }
  const contentLength = request.headers.get('content-length')
  if (contentLength === null || contentLength === '0') return { body: 'null', note: null }
  return { body: 'null', note: `not kept (${errorCode ?? 'not read'})` }
}

/** The answer as kept: the text that was sent (http/steps/access-log.ts), unless a secret must go first. */
function keptAnswer(state: RequestState): Kept {
  const answer = state.answer
  if (answer === undefined) return { text: 'null', truncated: false }
  const redacted = withoutSecrets(answer)
  return redacted !== answer || state.answerText === undefined ? kept(redacted) : cut(state.answerText)
}

/**
 * A call waiting in memory to be written: numbers and text only, one object. A session calling fast
 * has 200 waiting; while each held its answer's objects, holding them cost plan search about a tenth
 * of its rate (bench/findings.md, 2026-11-27). The entry's JSON is built when it is written: most
 * calls are pushed out of their session's newest 200 before that (storage/sqlite/request-log.ts).
 */
class WaitingCall implements LoggedCall {
  readonly requestId: string
  readonly at: number
  private readonly method: string
  private readonly errorCode: string | null
  private readonly idempotencyKey: 'sent' | 'replayed' | null
  private readonly outcome: string | null
  private readonly delayMs: number | null
  private readonly contentType: string | null
  private readonly sent: string
  private readonly sentNote: string | null
  private readonly answerType: string
  private readonly answer: string
  private readonly truncated: boolean

  constructor(
    readonly sessionId: number,
    state: RequestState,
    request: Request,
    readonly path: string,
    readonly status: number,
    private readonly durationMs: number,
    headers: Record<string, unknown>,
  ) {
    const answer = state.answer as any
    const outcome = request.headers.get(FORCED_OUTCOME_HEADER)
    const errorCode: string | null = answer?.ok === false ? answer.error.code : null
    const sent = requestBody(state.loggedBody, errorCode, answer, request)
    const answered = keptAnswer(state)
    this.requestId = state.requestId
    this.at = state.admittedAt
    this.method = loggedMethod(request.method)
    this.errorCode = errorCode
    this.idempotencyKey = request.headers.has('idempotency-key') ? (headers['idempotent-replayed'] === 'true' ? 'replayed' : 'sent') : null
    this.outcome = outcome === null ? null : KNOWN_OUTCOMES.has(outcome) ? outcome : '(not a known outcome)'
    this.delayMs = state.delayMs > 0 ? state.delayMs : null
    this.contentType = mediaType(request)
    this.sent = sent.body
    this.sentNote = sent.note
    this.answerType = answer === undefined ? String(headers['content-type'] ?? '') : 'application/json'
    this.answer = answered.text
    this.truncated = answered.truncated
  }

  get entry(): string {
    const view = {
      request_id: this.requestId,
      at: isoTimestamp(this.at),
      method: this.method,
      path: this.path,
      status: this.status,
      error_code: this.errorCode,
      duration_ms: this.durationMs,
      testing: { idempotency_key: this.idempotencyKey, sandbox_outcome: this.outcome, sandbox_delay_ms: this.delayMs },
      request: { content_type: this.contentType, body: SENT, note: this.sentNote },
      answer: { content_type: this.answerType, body: ANSWER, truncated: this.truncated },
    }
    return spliced(JSON.stringify(view), this.sent, this.answer)
  }
}

/** The call's entry in its session's log, or null when it belongs to no session. */
export function callRecord(
  state: RequestState,
  request: Request,
  { path, status, durationMs }: { path: string; status: number; durationMs: number },
  headers: Record<string, unknown>,
): LoggedCall | null {
  return state.session ? new WaitingCall(state.session.id, state, request, path, status, durationMs, headers) : null
}
