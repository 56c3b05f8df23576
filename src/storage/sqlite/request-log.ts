/**
 * @module The request log of the embedded engine: calls kept in memory and written behind
 * (write-behind.ts), in the write-behind's own transaction only, as rate hits are: a call's answer
 * never waits for its line. Each write keeps the newest `REQUEST_LOG_PER_SESSION` of a session.
 *
 * A session's calls wait in memory (its newest 200 at most) until its log is read, or `LOG_WRITE_MS`
 * after the first of them, and each round of the write-behind writes at most a `SLICE` of those
 * waiting unasked. A plan search's entry is about 2 KB; written, indexed and later trimmed it cost
 * about 20 µs, so one per call cost plan search a quarter of its throughput, and all of them at once
 * stalled every request behind the write (bench/findings.md, 2026-11-27). A crash loses what waits;
 * nothing else waits for the log.
 */
import { REQUEST_LOG_PER_SESSION, type LoggedCall, type LoggedRow, type RequestLogQuery } from '../storage'
import type { SqliteConnection } from './connection'

/** How long a session's calls may wait in memory when nobody reads its log. */
const LOG_WRITE_MS = 5_000

/**
 * The most calls a round of the write-behind writes unasked, oldest first (a session's may be split
 * between rounds): a few milliseconds of the request thread (50 took 4–8 ms on disk; whole sessions,
 * 200 calls, 12–19 ms, and requests waited behind them: bench/findings.md, 2026-11-27).
 */
const SLICE = 32

/** Past this many calls waiting, a round also writes those over it: memory stays bounded under any load. */
const HELD_AT_MOST = 20_000

interface Waiting {
  since: number
  calls: LoggedCall[]
}

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
  const page = db.prepare<LoggedRow>(
    `SELECT id, at, entry FROM request_log
     WHERE session_id = ? AND (? IS NULL OR at < ? OR (at = ? AND id < ?)) AND (? = 0 OR status >= 400) AND (? IS NULL OR path = ?)
       AND (? IS NULL OR at >= ?) AND (? IS NULL OR at <= ?)
     ORDER BY at DESC, id DESC LIMIT ?`,
  )
  const byRequest = db.prepare<LoggedRow>('SELECT id, at, entry FROM request_log WHERE session_id = ? AND request_id = ?')
  // Each session's newest calls not yet written, oldest first; sessions in the order they began to wait.
  let waiting = new Map<number, Waiting>()
  let count = 0
  let asked: Set<number> | 'all' = new Set()

  function add(call: LoggedCall, since = Date.now()): void {
    let session = waiting.get(call.sessionId)
    if (!session) waiting.set(call.sessionId, (session = { since, calls: [] }))
    session.calls.push(call)
    // An older one would be trimmed once written: it is never written.
    if (session.calls.length > REQUEST_LOG_PER_SESSION) session.calls.shift()
    else count++
  }

  /** Up to `most` of the session's calls, oldest first; the session stops waiting once none is left. */
  function takeSession(sessionId: number, taken: LoggedCall[], most = Number.POSITIVE_INFINITY): void {
    const session = waiting.get(sessionId)
    if (!session) return
    const calls = session.calls.length <= most ? session.calls : session.calls.splice(0, most)
    if (calls === session.calls) waiting.delete(sessionId)
    count -= calls.length
    for (const call of calls) taken.push(call)
  }

  const oldestDue = (now: number) => {
    const first = waiting.values().next().value as Waiting | undefined
    return first !== undefined && (now - first.since >= LOG_WRITE_MS || count > HELD_AT_MOST)
  }

  /** The write-behind's view (unwritten.ts): empty until a session is asked for or has waited its time. */
  const pending = {
    isEmpty: () => !(asked === 'all' ? count > 0 : asked.size > 0 || oldestDue(Date.now())),
    take(): LoggedCall[] {
      const taken: LoggedCall[] = []
      if (asked === 'all') asked = new Set(waiting.keys())
      for (const sessionId of asked) takeSession(sessionId, taken)
      asked = new Set()
      const now = Date.now()
      const slice = taken.length + SLICE + Math.max(0, count - HELD_AT_MOST)
      while (taken.length < slice && oldestDue(now)) takeSession(waiting.keys().next().value as number, taken, slice - taken.length)
      return taken
    },
    /** A failed write gives its calls back, before those added meanwhile; they wait anew. */
    restore(taken: LoggedCall[]): void {
      const newer = waiting
      waiting = new Map()
      count = 0
      for (const call of taken) add(call)
      for (const session of newer.values()) for (const call of session.calls) add(call, session.since)
    },
  }

  return {
    add: (call: LoggedCall) => add(call),
    /** The next write takes this session's calls (its log is read), or every call (shutdown). */
    wantWritten(sessionId?: number): void {
      if (sessionId === undefined) asked = 'all'
      else if (asked !== 'all' && waiting.has(sessionId)) asked.add(sessionId)
    },
    list(sessionId: number, { before, failedOnly, path, since, until, limit }: RequestLogQuery): LoggedRow[] {
      const [at, id] = before === null ? [null, null] : [before.at, before.id]
      return page.all(sessionId, at, at, at, id, failedOnly ? 1 : 0, path, path, since, since, until, until, limit)
    },
    find(sessionId: number, requestId: string): LoggedRow | undefined {
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
