/**
 * @module The request log on PostgreSQL: calls kept in this process's memory and written behind in
 * one statement every `WRITE_BEHIND_MS` (a call's answer never waits for its line); each write keeps
 * the newest `REQUEST_LOG_PER_SESSION` of a session. Another instance's calls show once it has
 * written them (within that interval).
 */
import { REQUEST_LOG_PER_SESSION, type LoggedCall, type LoggedRow, type RequestLogStore } from '../storage'
import { inTransaction, type Queryable } from './driver'
import type { Sql } from 'postgres'

/** How long a call's line may wait for the database: the most a crash loses of the log. */
export const WRITE_BEHIND_MS = 200

export function requestLogStore(sql: Queryable): RequestLogStore {
  return {
    async list(sessionId, { before, failedOnly, path, since, until, limit }) {
      return sql<LoggedRow[]>`
        SELECT id, at, entry FROM request_log
        WHERE session_id = ${sessionId}
          ${before === null ? sql`` : sql`AND (at < ${before.at} OR (at = ${before.at} AND id < ${before.id}))`}
          ${failedOnly ? sql`AND status >= 400` : sql``}
          ${path === null ? sql`` : sql`AND path = ${path}`}
          ${since === null ? sql`` : sql`AND at >= ${since}`}
          ${until === null ? sql`` : sql`AND at <= ${until}`}
        ORDER BY at DESC, id DESC LIMIT ${limit}`
    },
    async find(sessionId, requestId) {
      const [row] = await sql<LoggedRow[]>`
        SELECT id, at, entry FROM request_log WHERE session_id = ${sessionId} AND request_id = ${requestId}`
      return row
    },
  }
}

/**
 * The most calls held unwritten while the database does not take them: past it the oldest go (the
 * log is a help, not a record; a session keeps only its newest 200 anyway).
 */
const HELD_AT_MOST = 20_000

/** The calls this process logged and has not written yet, and their writing. */
export function requestLogWriter(sql: Sql<any>) {
  let held: LoggedCall[] = []
  let writing: Promise<void> = Promise.resolve()

  async function write(taken: LoggedCall[]): Promise<void> {
    const rows = taken.map((call) => ({
      session_id: call.sessionId,
      request_id: call.requestId,
      at: call.at,
      path: call.path,
      status: call.status,
      entry: call.entry,
    }))
    const sessions = [...new Set(taken.map((call) => call.sessionId))]
    // In the order they were logged; sessions the sweep purged meanwhile get nothing. The trim in the
    // same transaction, so that a failed one never leaves calls written that are then written again.
    await inTransaction(sql, async (connection) => {
      await connection`
        INSERT INTO request_log (session_id, request_id, at, path, status, entry)
        SELECT r.session_id, r.request_id, r.at, r.path, r.status, r.entry
        FROM ROWS FROM (json_to_recordset(${JSON.stringify(rows)}::text::json)
            AS (session_id bigint, request_id text, at bigint, path text, status integer, entry text))
          WITH ORDINALITY AS r(session_id, request_id, at, path, status, entry, n)
        WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = r.session_id AND NOT s.purged)
        ORDER BY r.n`
      await connection`
        DELETE FROM request_log l USING (
          SELECT id FROM (
            SELECT id, ROW_NUMBER() OVER (PARTITION BY session_id ORDER BY at DESC, id DESC) AS place
            FROM request_log WHERE session_id = ANY(${sessions}::bigint[])) ranked
          WHERE place > ${REQUEST_LOG_PER_SESSION}) old
        WHERE l.id = old.id`
    })
  }

  return {
    add(call: LoggedCall): void {
      held.push(call)
      if (held.length > HELD_AT_MOST) held.splice(0, held.length - HELD_AT_MOST)
    },
    /** Writes what is held, after any write under way; a failed write puts its calls back. */
    flush(): Promise<void> {
      writing = writing.then(async () => {
        if (held.length === 0) return
        const taken = held
        held = []
        try {
          await write(taken)
        } catch (error) {
          held = taken.concat(held).slice(-HELD_AT_MOST)
          throw error
        }
      })
      const done = writing
      writing = writing.catch(() => {})
      return done
    },
  }
}
