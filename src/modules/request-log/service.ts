/**
 * @module Reading a session's request log: its calls newest first, narrowed and paged, and one call
 * by its `request_id` (another session's is not found, as every foreign reference).
 */
import { ApiError, throwIfInvalid } from '../../errors'
import { toInstant } from '../../domain/dates'
import type { Services } from '../services'
import type { CallView, RequestLogRequest } from './model'

const PAGE = 50

/** A `next_cursor`: the last call's time and id. */
const cursorOf = (cursor: string) => {
  const [at, id] = cursor.split('_').map(Number) as [number, number]
  return { at, id }
}

/** A time filter as epoch ms; one that is not a real instant with its zone is refused, not ignored. */
function instantFilter(field: 'since' | 'until', text: string | undefined): number | null {
  if (text === undefined) return null
  const at = toInstant(text)
  if (at === null) throwIfInvalid([{ field, issue: 'must be an ISO 8601 instant with its zone (e.g. 2026-11-27T09:00:00Z)' }])
  return at
}

export async function listCalls(services: Pick<Services, 'storage'>, session: { id: number }, request: RequestLogRequest) {
  const limit = request.limit ?? PAGE
  const rows = await services.storage.requestLog.list(session.id, {
    before: request.cursor === undefined ? null : cursorOf(request.cursor),
    failedOnly: request.failed ?? false,
    path: request.path ?? null,
    since: instantFilter('since', request.since),
    until: instantFilter('until', request.until),
    limit: limit + 1,
  })
  const page = rows.slice(0, limit)
  return {
    calls: page.map((row) => JSON.parse(row.entry) as CallView),
    next_cursor: rows.length > limit ? `${page.at(-1)!.at}_${page.at(-1)!.id}` : null,
  }
}

export async function findCall(services: Pick<Services, 'storage'>, session: { id: number }, requestId: string): Promise<CallView> {
  const row = /^req_[0-9a-f]{1,64}$/.test(requestId) ? await services.storage.requestLog.find(session.id, requestId) : undefined
  if (!row) throw new ApiError('request_not_found')
  return JSON.parse(row.entry)
}
