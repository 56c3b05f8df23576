/**
 * @module Reading a session's request log: its calls newest first, narrowed and paged, and one call
 * by its `request_id` (another session's is not found, as every foreign reference).
 */
import { ApiError } from '../../errors'
import type { Services } from '../services'
import type { CallView, RequestLogRequest } from './model'

const PAGE = 50

/** A `next_cursor`: the last call's time and id. */
const cursorOf = (cursor: string) => {
  const [at, id] = cursor.split('_').map(Number) as [number, number]
  return { at, id }
}

export async function listCalls(services: Pick<Services, 'storage'>, session: { id: number }, request: RequestLogRequest) {
  const limit = request.limit ?? PAGE
  const rows = await services.storage.requestLog.list(session.id, {
    before: request.cursor === undefined ? null : cursorOf(request.cursor),
    failedOnly: request.failed ?? false,
    path: request.path ?? null,
    since: request.since === undefined ? null : Date.parse(request.since),
    until: request.until === undefined ? null : Date.parse(request.until),
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
