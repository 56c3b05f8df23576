/**
 * @module The PostgreSQL driver: the pool (postgres.js, which runs on Bun, Node and Deno) and
 * transactions on a reserved connection. Not `sql.begin`: in postgres.js 3.4.9 a `BEGIN` that fills
 * a connection's pipeline is sent without reserving the connection (porsager/postgres#823, #1189;
 * seen here as UNSAFE_TRANSACTION 500s under 300 concurrent idempotent calls), and the open
 * transaction can then go back to the pool with other requests' queries inside it. A connection
 * taken with `reserve()` is ours before any byte is written.
 */
import postgres, { type ReservedSql, type Sql } from 'postgres'

export type Connection = ReservedSql<any>

/** The pool, or one connection of it inside a transaction: what the stores' queries run on. */
export type Queryable = Sql<any> | Connection

/**
 * postgres.js 3.4.9 sends a short write from a `setImmediate`; when the server drops the connection
 * before it runs (a database dropped, restarted or failed over), it writes to a socket already gone
 * and throws where nothing can catch it, ending the process (porsager/postgres#1066, #1154, #1208;
 * the fix, #1176 and #1209, is not released). The query the bytes belonged to has already failed
 * with CONNECTION_CLOSED, so that one error is dropped with a warning; any other uncaught error ends
 * the process as it would have. Remove with the release that guards `nextWrite`.
 */
function surviveWriteAfterClose(): void {
  if (process.listenerCount('uncaughtException') > 0) return
  process.on('uncaughtException', (error) => {
    const stack = error instanceof Error ? (error.stack ?? '') : ''
    if (error instanceof TypeError && /\bwrite\b/.test(error.message) && /\bnextWrite\b/.test(stack)) {
      process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: 'postgres.js wrote to a closed connection; ignored' })}\n`)
      return
    }
    process.stderr.write(`${stack || String(error)}\n`)
    process.exit(1)
  })
}

export function openPool(url: string, size: number): Sql<any> {
  surviveWriteAfterClose()
  return postgres(url, {
    max: size,
    onnotice: () => {},
    // A database that stops answering, or a lock an instance holds and never releases (a frozen
    // process), answers 503 within seconds instead of holding requests: SQLite's busy_timeout, here.
    connect_timeout: 5,
    connection: { lock_timeout: 5_000, statement_timeout: 10_000, idle_in_transaction_session_timeout: 15_000 },
    // bigint columns hold milliseconds and ids, all far below 2^53.
    types: { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) } },
  })
}

/**
 * Runs `work` between BEGIN and COMMIT on one reserved connection; ROLLBACK when it throws. BEGIN
 * goes out with the work's first statement (postgres.js pipelines a connection's queries), a round
 * trip less per transaction. On a connection just reserved (never inside a transaction) BEGIN fails
 * only with the connection, which fails the statements behind it too; it is awaited before COMMIT
 * all the same.
 */
export async function inTransaction<T>(sql: Sql<any>, work: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await sql.reserve()
  const begun = connection`BEGIN`.execute()
  begun.catch(() => {}) // answered below, after the work
  try {
    const result = await work(connection)
    await begun
    await connection`COMMIT`
    return result
  } catch (error) {
    // A lost connection has nothing left to roll back; the original error is the one to report.
    await connection`ROLLBACK`.catch(() => {})
    throw error
  } finally {
    connection.release()
  }
}

/**
 * A row lock for a read that precedes a write, inside a transaction (`locking`); nothing outside one.
 * Made per query: postgres.js runs a fragment as part of the query it is placed in.
 */
export function rowLock(sql: Queryable, locking: boolean, mode: 'share' | 'update') {
  if (!locking) return sql``
  return mode === 'share' ? sql`FOR SHARE` : sql`FOR UPDATE`
}
