/**
 * @module The request log of the embedded engine: calls kept in memory and written behind
 * (write-behind.ts), in the write-behind's own transaction only, as rate hits are: a call's answer
 * never waits for its line. Each write keeps the newest `REQUEST_LOG_PER_SESSION` of a session.
 */
import { REQUEST_LOG_PER_SESSION, type LoggedCall, type RequestLogQuery } from '../storage'
import type { SqliteConnection } from './connection'
import { unwritten } from './unwritten'

export function requestLogStore(db: SqliteConnection) {
  // A session the sweep purged meanwhile gets nothing.
  const insert = db.prepare(
    `INSERT INTO request_log (session_id, request_id, at, path, status, entry)
     SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ? AND purged = 0)`,
  )
  // In the list's order: a call answered late (a delay) is placed by when it was admitted.
  const prune = db.prepare(
    `DELETE FROM request_log WHERE session_id = ? AND (at, id) <= (
       SELECT at, id FROM request_log WHERE session_id = ? ORDER BY at DESC, id DESC LIMIT 1 OFFSET ${REQUEST_LOG_PER_SESSION})`,
  )
  // Every filter in one statement: a null parameter lets its condition pass.
  const page = db.prepare<{ id: number; at: number; entry: string }>(
    `SELECT id, at, entry FROM request_log
     WHERE session_id = ? AND (? IS NULL OR at < ? OR (at = ? AND id < ?)) AND (? = 0 OR status >= 400) AND (? IS NULL OR path = ?)
       AND (? IS NULL OR at >= ?) AND (? IS NULL OR at <= ?)
     ORDER BY at DESC, id DESC LIMIT ?`,
  )
  const byRequest = db.prepare<{ id: number; at: number; entry: string }>('SELECT id, at, entry FROM request_log WHERE session_id = ? AND request_id = ?')
  const pending = unwritten<LoggedCall[]>(
    () => [],
    (held) => held.length,
    (taken, newer) => taken.concat(newer),
  )
  return {
    add(call: LoggedCall): void {
      pending.held.push(call)
    },
    list(sessionId: number, { before, failedOnly, path, since, until, limit }: RequestLogQuery): { id: number; at: number; entry: string }[] {
      const [at, id] = before === null ? [null, null] : [before.at, before.id]
      return page.all(sessionId, at, at, at, id, failedOnly ? 1 : 0, path, path, since, since, until, until, limit)
    },
    find(sessionId: number, requestId: string): { id: number; at: number; entry: string } | undefined {
      return byRequest.get(sessionId, requestId)
    },
    /** The calls added and not yet written. */
    unwritten: pending,
    write(taken: LoggedCall[]): void {
      const sessions = new Set<number>()
      for (const call of taken) {
        insert.run(call.sessionId, call.requestId, call.at, call.path, call.status, call.entry, call.sessionId)
        sessions.add(call.sessionId)
      }
      for (const sessionId of sessions) prune.run(sessionId, sessionId)
    },
  }
}

export type RequestLog = ReturnType<typeof requestLogStore>
