/** @module Schemas of the request log: the query, a call as listed, the list. */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'

const Cursor = t.String({ pattern: '^[0-9]{1,15}_[0-9]{1,15}$', description: "The previous answer's `next_cursor`.", 'x-issue': 'must be a next_cursor' })

export const RequestLogBody = t.Object(
  {
    failed: t.Optional(t.Boolean({ description: 'Only calls answered 4xx or 5xx.' })),
    path: t.Optional(t.String({ maxLength: 200, description: 'Only calls to this path, as listed (`/api/sandbox/policy/{policy_ref}/cancel` with the ref).' })),
    since: t.Optional(t.String({ format: 'date-time', description: 'Only calls at or after this instant (real time).' })),
    until: t.Optional(t.String({ format: 'date-time', description: 'Only calls at or before this instant (real time).' })),
    cursor: t.Optional(Cursor),
    limit: t.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many (50 by default).', 'x-issue': 'must be a whole number from 1 to 100' }),
    ),
  },
  { additionalProperties: false, 'x-issue': 'must be an object' },
)

export const CallModel = t.Object(
  {
    request_id: t.String(),
    at: t.String({ format: 'date-time', description: 'When the call was admitted (real time).' }),
    method: t.String(),
    path: t.String({ description: 'As the sandbox logs it: its own words and references; any other segment is a placeholder.' }),
    status: Type.Integer(),
    error_code: t.Union([t.String(), t.Null()]),
    duration_ms: t.Number(),
    testing: t.Object({
      idempotency_key: t.Union([t.Literal('sent'), t.Literal('replayed'), t.Null()], { description: '`replayed`: answered from the first request.' }),
      sandbox_outcome: t.Union([t.String(), t.Null()]),
      sandbox_delay_ms: t.Union([Type.Integer(), t.Null()]),
    }),
    request: t.Object({
      content_type: t.Union([t.String(), t.Null()]),
      body: t.Unknown({ description: 'The JSON body as received; null when none was kept (see `note`).' }),
      note: t.Union([t.String(), t.Null()], { description: 'Why no body was kept: refused as personal data (its field paths only), or not read as JSON.' }),
    }),
    answer: t.Object({
      content_type: t.String(),
      body: t.Unknown({ description: 'The envelope answered; a string of its first 16 KiB when `truncated`.' }),
      truncated: t.Boolean(),
    }),
  },
  { description: 'A call of this session, as the sandbox received and answered it.' },
)

export const RequestLogData = t.Object({
  calls: t.Array(CallModel, { description: 'Newest first.' }),
  next_cursor: t.Union([Cursor, t.Null()], { description: 'Pass as `cursor` for older calls; null when none are left.' }),
})

export const RequestParams = t.Object({ request_id: t.String() })

export type RequestLogRequest = typeof RequestLogBody.static
export type CallView = typeof CallModel.static
