/**
 * @module The contract's error codes, and the one error class that carries them.
 * Domain rules and HTTP handling throw `ApiError`; the app's error hook turns it into the envelope.
 */

/** Every error code of the contract, with its HTTP status. */
export const ERROR_STATUS = {
  invalid_json: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  headers_too_large: 431,
  request_timeout: 408,
  validation_failed: 422,
  trip_too_long: 422,
  too_many_travellers: 422,
  unsupported_currency: 422,
  pii_not_allowed: 422,
  plan_not_found: 404,
  plan_mismatch: 409,
  policy_not_found: 404,
  scenario_not_applicable: 422,
  policy_cancelled: 409,
  document_not_ready: 409,
  insurer_declined: 422,
  price_changed: 409,
  event_not_found: 404,
  webhook_not_registered: 409,
  idempotency_key_reused: 422,
  idempotency_in_progress: 409,
  session_expired: 401,
  rate_limited: 429,
  not_found: 404,
  method_not_allowed: 405,
  storage_unavailable: 503,
  upstream_unavailable: 503,
  upstream_invalid: 502,
  internal_error: 500,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** The words of failures raised in more than one place, so that a forced one reads as the real one. */
export const FAILURE_MESSAGE = {
  storage_unavailable: 'Sandbox storage is unavailable; try again shortly.',
  internal_error: 'Something went wrong on our side. Quote the request_id if you report it.',
  session_expired: 'This session has ended. Call again without the cookie, or create a new session.',
  upstream_unavailable: 'The test insurer is not answering; try again shortly.',
  upstream_invalid: 'The test insurer answered something the sandbox cannot use.',
  insurer_declined: 'The insurer declined to issue this policy; nothing was issued.',
  policy_cancelled: 'This policy is cancelled: it can no longer be modified or cancelled.',
} as const satisfies Partial<Record<ErrorCode, string>>

/** One problem in a request: `field` is a JSON path (`trip.end_date`, `travellers[2].age`). */
export interface ErrorDetail {
  field: string
  issue: string
}

export class ApiError extends Error {
  readonly status: number
  readonly code: ErrorCode
  readonly details?: ErrorDetail[]
  /** Seconds for the `Retry-After` header (429, 503). */
  readonly retryAfter?: number

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[], retryAfter?: number) {
    // An ApiError is an answer, not a fault: nothing reads its stack, and capturing one through a
    // request's async frames was 1.5 µs of a refused (429) call's 30 (Bun's CPU profile).
    const stackTraceLimit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    super(message)
    Error.stackTraceLimit = stackTraceLimit
    this.code = code
    this.details = details
    this.retryAfter = retryAfter
    this.status = ERROR_STATUS[code]
  }
}

/** `validation_failed` with every problem found; a no-op when there is none. */
export function throwIfInvalid(details: ErrorDetail[]): void {
  if (details.length > 0) {
    throw new ApiError('validation_failed', 'The request has invalid fields; see details.', details)
  }
}

/**
 * Whether an answer may repeat a field name the caller sent: a plain identifier of at most 64
 * characters. Any other name may carry the caller's data ("Ravi Kumar +91…") or run to kilobytes;
 * a detail about it names the object that holds it instead.
 */
export function isRepeatableName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)
}

/** Appends an object key or array index to a JSON path: `trip` + `end_date`, `travellers` + 2. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`
  const name = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : JSON.stringify(key)
  if (parent === '') return name
  return name.startsWith('"') ? `${parent}[${name}]` : `${parent}.${name}`
}
