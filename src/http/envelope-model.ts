/**
 * @module The envelope of spec 2.1 as TypeBox schemas: the routes declare them as their responses,
 * so Eden clients and the OpenAPI document are typed from the same source.
 */
import { t, type TSchema } from 'elysia'
import { withHeaders } from '@elysiajs/openapi'
import { ERROR_STATUS, type ErrorCode } from '../errors'

export const ModeModel = t.UnionEnum(['simulation', 'uat_gateway'], {
  description: '`simulation`: deterministic sandbox data; `uat_gateway`: a test insurer environment answered.',
})

const Timestamp = t.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp.' })

export const MetaModel = t.Object({
  sandbox: t.Literal(true),
  session_expires_at: t.Union([Timestamp, t.Null()], { description: "Expiry of the caller's session; null when the answer belongs to no session." }),
  rate_limit: t.Object({
    limit: t.Integer({ description: 'Requests allowed in any rolling window.' }),
    remaining: t.Integer({ description: 'Requests left: the smaller of the session and network counters.' }),
    reset_at: t.String({ format: 'date-time', description: 'When `remaining` next grows.' }),
  }),
})

export const ErrorModel = t.Object({
  code: t.UnionEnum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]], { description: 'The stable contract.' }),
  message: t.String({ description: 'For people; may change.' }),
  details: t.Optional(
    t.Array(t.Object({
      field: t.String({ description: 'JSON path: `trip.end_date`, `travellers[2].age`; `$` is the body.' }),
      issue: t.String(),
    })),
  ),
})

const RequestId = t.String({ pattern: '^req_[0-9a-f]+$', description: 'Also sent as the X-Request-Id header.' })

/** Headers on every sandbox answer. */
const ENVELOPE_HEADERS = {
  'X-Request-Id': t.String({ description: 'Equals `request_id`.' }),
  RateLimit: t.String({ description: 'IETF draft: `"sandbox";r=<remaining>;t=<seconds until reset>`.' }),
  'RateLimit-Policy': t.String({ description: 'IETF draft: `"sandbox";q=<limit>;w=<window seconds>`.' }),
  'Cache-Control': t.Literal('no-store'),
}

export const successModel = <Data extends TSchema>(data: Data) =>
  t.Object({ ok: t.Literal(true), mode: ModeModel, request_id: RequestId, data, meta: MetaModel })

export const FailureModel = t.Object({ ok: t.Literal(false), mode: ModeModel, request_id: RequestId, error: ErrorModel, meta: MetaModel })

/** Error answers every sandbox route can give, whatever its body. */
const EVERY_ROUTE = [
  'invalid_json', 'unsupported_media_type', 'payload_too_large', 'validation_failed', 'pii_not_allowed',
  'session_expired', 'rate_limited', 'storage_unavailable', 'internal_error',
] as const satisfies ErrorCode[]

/** One failure envelope per HTTP status the codes use: literal keys, so Eden types each status. */
type FailureResponses<Code extends ErrorCode> = { [Status in (typeof ERROR_STATUS)[Code]]: typeof FailureModel }

/**
 * A route's `response` map: the success envelope at 200 and the failure envelope at every status
 * its error codes use, each described by the codes it carries.
 */
export function responses<Data extends TSchema, const Code extends ErrorCode = never>(
  data: Data,
  codes: readonly Code[],
): FailureResponses<Code | (typeof EVERY_ROUTE)[number]> & { 200: ReturnType<typeof successModel<Data>> } {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of [...EVERY_ROUTE, ...codes]) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code])
  const failures: Record<number, typeof FailureModel> = {}
  for (const [status, list] of byStatus) {
    const retry = list.some((code) => ['rate_limited', 'storage_unavailable'].includes(code))
    failures[status] = withHeaders(
      t.Object(FailureModel.properties, { description: `Error codes: ${list.map((code) => `\`${code}\``).join(', ')}.` }),
      retry ? { ...ENVELOPE_HEADERS, 'Retry-After': t.Integer({ description: 'Seconds to wait.' }) } : ENVELOPE_HEADERS,
    ) as typeof FailureModel
  }
  return { ...failures, 200: withHeaders(successModel(data), ENVELOPE_HEADERS) } as unknown as FailureResponses<Code | (typeof EVERY_ROUTE)[number]> & { 200: ReturnType<typeof successModel<Data>> }
}
