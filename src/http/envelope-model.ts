/**
 * @module The envelope of spec 2.1 as TypeBox schemas: the routes declare them as their responses,
 * so Eden clients and the OpenAPI document are typed from the same source.
 */
import { t, type TSchema } from 'elysia'
import { Type, type TUnsafe } from '@sinclair/typebox'
import { withHeaders } from '@elysiajs/openapi'
import { ERRORS, type ErrorCode, type ErrorStatus } from '../errors'

/** A union of string literals: the document shows a plain `enum` (t.UnionEnum would add a `default`). */
export function literals<const Value extends string>(values: readonly Value[], options: { description?: string } = {}) {
  // Typed as its values: TypeBox cannot type a union built from an array that is not a tuple.
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  ) as unknown as TUnsafe<Value>
}

/** The body of a call that takes no fields: empty, or `{}`. */
export const NoFields = Type.Object({}, { additionalProperties: false, 'x-issue': 'must be an empty object' })

export const ModeModel = literals(['simulation', 'uat_gateway'], {
  description: '`simulation`: deterministic sandbox data; `uat_gateway`: a test insurer environment answered.',
})

const Timestamp = t.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp.' })

// TypeBox's own Integer: Elysia's t.Integer also accepts integer-shaped strings, and the document
// would say `string | integer`.
/** A session's business clock (domain/session-clock.ts), as answers show it. */
export const ClockModel = t.Object(
  {
    now: t.String({ format: 'date-time', description: "The session's business time: what its trips, refunds, cover and answers' times follow." }),
    today: t.String({ format: 'date', description: "Today on the session's clock (UTC)." }),
    offset_seconds: Type.Integer({ minimum: 0, description: 'How far it runs ahead of real time.' }),
  },
  { description: "A session's clock: real time until advanced (test helpers), then ahead of it; it never moves back." },
)

export const MetaModel = t.Object({
  sandbox: t.Literal(true),
  session_expires_at: t.Union([Timestamp, t.Null()], { description: "Expiry of the caller's session; null when the answer belongs to no session." }),
  rate_limit: t.Object({
    limit: Type.Integer({ description: 'Requests allowed in any rolling window.' }),
    remaining: Type.Integer({ description: 'Requests left: the smaller of the session and network counters.' }),
    reset_at: t.String({ format: 'date-time', description: 'When `remaining` next grows.' }),
  }),
  session_clock: t.Optional(
    t.Object(ClockModel.properties, {
      description:
        "Present once the session's clock was advanced: its business time. `session_expires_at`, `rate_limit` and webhook retries stay on real time.",
    }),
  ),
})

const RequestId = t.String({ pattern: '^req_[0-9a-f]+$', description: 'Also sent as the X-Request-Id header.' })

/** The error object, its `code` limited to the codes given. */
function errorModel<Code extends ErrorCode>(codes: readonly Code[]) {
  return t.Object(
    {
      code: literals(codes),
      message: t.String({ description: 'For people; may change.' }),
      details: t.Optional(
        t.Array(
          t.Object({
            field: t.String({ description: 'JSON path: `trip.end_date`, `travellers[2].age`; `$` is the body.' }),
            issue: t.String(),
          }),
        ),
      ),
    },
    { description: '`code` is the stable contract.' },
  )
}

/** The failure envelope for the codes given. */
function failureModel<Code extends ErrorCode>(codes: readonly Code[]) {
  return t.Object({ ok: t.Literal(false), mode: ModeModel, request_id: RequestId, error: errorModel(codes), meta: MetaModel })
}

/** The failure envelope with any code (what the error hook builds). */
export const FailureModel = failureModel(Object.keys(ERRORS) as ErrorCode[])

export const successModel = <Data extends TSchema>(data: Data) =>
  t.Object({ ok: t.Literal(true), mode: ModeModel, request_id: RequestId, data, meta: MetaModel })

/** Headers on every sandbox answer. */
const ENVELOPE_HEADERS = {
  'X-Request-Id': t.String({ description: 'Equals `request_id`.' }),
  RateLimit: t.String({ description: 'IETF draft: `"sandbox";r=<remaining>;t=<seconds until reset>`.' }),
  'RateLimit-Policy': t.String({ description: 'IETF draft: `"sandbox";q=<limit>;w=<window seconds>`.' }),
  'Cache-Control': t.Literal('no-store'),
  'Set-Cookie': t.String({
    description:
      '`sbx_session=<token>; Max-Age=<session lifetime + 86400>; Path=/; HttpOnly; SameSite=Strict` when this call opened a session ' +
      '(the cookie outlives the session by the 24 hours in which its ended session answers `session_expired`); the same cookie ' +
      'with `Max-Age=0` when it answers `session_expired`. Send it back on later calls.',
  }),
}
const RETRY_HEADERS = { ...ENVELOPE_HEADERS, 'Retry-After': Type.Integer({ description: 'Seconds to wait before calling again.' }) }

/** Error answers every sandbox route can give, whatever its body. */
const EVERY_ROUTE = [
  'invalid_json',
  'unsupported_media_type',
  'payload_too_large',
  'headers_too_large',
  'request_timeout',
  'validation_failed',
  'pii_not_allowed',
  'session_expired',
  'rate_limited',
  'storage_unavailable',
  'internal_error',
] as const satisfies ErrorCode[]
type EveryRoute = (typeof EVERY_ROUTE)[number]

type StatusOf<Code extends ErrorCode> = ErrorStatus<Code>
/** The codes among `Code` that answer with `Status`. */
type CodesAt<Code extends ErrorCode, Status> = Code extends ErrorCode ? (StatusOf<Code> extends Status ? Code : never) : never
/** One failure envelope per HTTP status the codes use, each with only its own codes: Eden types each status. */
type FailureResponses<Code extends ErrorCode> = { [Status in StatusOf<Code>]: ReturnType<typeof failureModel<CodesAt<Code, Status>>> }
type Responses<Data extends TSchema, Code extends ErrorCode> = FailureResponses<Code | EveryRoute> & { 200: ReturnType<typeof successModel<Data>> }

/**
 * A route's `response` map: the success envelope at 200 and, at every status its error codes use,
 * the failure envelope that lists only the codes that status carries on this route.
 */
export function responses<Data extends TSchema, const Code extends ErrorCode = never>(data: Data, codes: readonly Code[]): Responses<Data, Code> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of [...EVERY_ROUTE, ...codes]) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code])
  const failures: Record<number, TSchema> = {}
  for (const [status, list] of byStatus) {
    const retry = list.some((code) => ['rate_limited', 'storage_unavailable', 'upstream_unavailable'].includes(code))
    failures[status] = withHeaders(
      t.Object(failureModel(list).properties, { description: `Error codes: ${list.map((code) => `\`${code}\``).join(', ')}.` }),
      retry ? RETRY_HEADERS : ENVELOPE_HEADERS,
    )
  }
  return { ...failures, 200: withHeaders(successModel(data), ENVELOPE_HEADERS) } as unknown as Responses<Data, Code>
}
