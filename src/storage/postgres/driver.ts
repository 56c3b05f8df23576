/**
 * @module The PostgreSQL driver: the pool (postgres.js, which runs on Bun, Node and Deno) and
 * transactions on a reserved connection. Not `sql.begin`: in postgres.js 3.4.9 a `BEGIN` that fills
 * a connection's pipeline is sent without reserving the connection (porsager/postgres#823, #1189;
 * seen here as UNSAFE_TRANSACTION 500s under 300 concurrent idempotent calls), and the open
 * transaction can then go back to the pool with other requests' queries inside it. A connection
 * taken with `reserve()` is ours before any byte is written.
 */
import postgres, { type ReservedSql, type Sql } from 'postgres'
import { StorageUnavailable } from '../storage'
import { connectionLost } from './faults'

export type Connection = ReservedSql<any>

/** The pool, or one connection of it inside a transaction: what the stores' queries run on. */
export type Queryable = Sql<any> | Connection

/**
 * postgres.js 3.4.9 sends a short write from a `setImmediate`; when the server drops the connection
 * before it runs (a database dropped, restarted or failed over), it writes to a socket already gone
 * and throws where nothing can catch it, ending the process (porsager/postgres#1066, #1154, #1208;
 * the fix, #1176 and #1209, is not released). A write of 1 KiB or more goes out at once and fails
 * the same way inside a promise nobody awaits. Which connection it was is not known, and that one
 * keeps the unsent bytes and a query that never settles, so it answers nothing again: every open
 * transaction is abandoned (`inTransaction`, it answers storage_unavailable) and every pool starts
 * afresh. Any other uncaught error or unhandled rejection ends the process as it would have.
 * Remove with the release that guards `nextWrite`.
 */
let surviving = false
function surviveWriteAfterClose(): void {
  if (surviving) return
  surviving = true
  const survive = (error: unknown) => {
    const stack = error instanceof Error ? (error.stack ?? '') : ''
    if (error instanceof TypeError && /\bwrite\b/.test(error.message) && /\bnextWrite\b/.test(stack)) {
      const msg = 'postgres.js wrote to a closed connection; open transactions abandoned, connections renewed'
      process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg })}\n`)
      for (const abandon of openTransactions) abandon('a connection was lost')
      for (const renew of openPools) renew()
      return
    }
    process.stderr.write(`${stack || String(error)}\n`)
    process.exit(1)
  }
  process.on('uncaughtException', survive)
  process.on('unhandledRejection', survive)
}

/** Each open transaction's way to give up its connection, and each pool's to start afresh. */
const openTransactions = new Set<(reason: string) => void>()
const openPools = new Set<() => void>()

function connect(url: string, size: number): Sql<any> {
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

/** The pool: postgres.js's, behind a stand-in that can put a new one in its place (`surviveWriteAfterClose`). */
export function openPool(url: string, size: number): Sql<any> {
  surviveWriteAfterClose()
  let current = connect(url, size)
  const renew = () => {
    const broken = current
    current = connect(url, size)
    // Its lost connection's query is failed at the end, and so the work that awaited it.
    broken.end({ timeout: 5 }).catch(() => {})
  }
  openPools.add(renew)
  const end: Sql<any>['end'] = (options) => {
    openPools.delete(renew)
    return current.end(options)
  }
  return new Proxy(current, {
    apply: (_, self, args) => Reflect.apply(current, self, args),
    get: (_, key) => (key === 'end' ? end : Reflect.get(current, key)),
  })
}

/**
 * How long a partner's call waits on a PostgreSQL transaction before it answers
 * storage_unavailable: longer than the server's statement_timeout (10 s), so that a slow statement
 * is reported as itself.
 */
export const STORAGE_DEADLINE_MS = 12_000

/**
 * Runs `work` between BEGIN and COMMIT on one reserved connection; ROLLBACK when it throws. BEGIN
 * goes out with the work's first statement (postgres.js pipelines a connection's queries), a round
 * trip less per transaction. On a connection just reserved (never inside a transaction) BEGIN fails
 * only with the connection, which fails the statements behind it too; it is awaited before COMMIT
 * all the same.
 *
 * A lost connection is not released: postgres.js 3.4.9 has already put it back among its closed
 * ones, and a release would hand it out again without a socket, where every query sent on it hangs
 * (porsager/postgres#1208; seen as an instance that stopped answering after its database was
 * dropped while a write-behind transaction was open).
 *
 * Given a deadline, or when a connection is lost unseen (`surviveWriteAfterClose`), a transaction
 * not yet committing answers storage_unavailable at once; its work, when it ends, is rolled back
 * whatever it did. One whose COMMIT is out answers what the COMMIT answers, so a call answered 503
 * has never written.
 */
export function inTransaction<T>(sql: Sql<any>, work: (connection: Connection) => Promise<T>, deadlineMs: number | null = null): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let late = false
    let committing = false
    const abandon = (reason: string) => {
      if (committing) return
      late = true
      settle()
      reject(new StorageUnavailable(reason))
    }
    const timer = deadlineMs === null ? undefined : setTimeout(abandon, deadlineMs, `no answer within ${deadlineMs} ms`)
    const settle = () => {
      clearTimeout(timer)
      openTransactions.delete(abandon)
    }
    openTransactions.add(abandon)
    run().then(resolve, reject).finally(settle)

    async function run(): Promise<T> {
      const connection = await sql.reserve()
      if (late) {
        // Nothing was sent on it.
        connection.release()
        throw new StorageUnavailable('abandoned')
      }
      const begun = connection`BEGIN`.execute()
      begun.catch(() => {}) // answered below, after the work
      let lost = false
      try {
        const result = await work(connection)
        await begun
        if (late) throw new StorageUnavailable('abandoned')
        committing = true
        await connection`COMMIT`
        return result
      } catch (error) {
        // The original error is the one to report.
        lost = connectionLost(error)
        if (!lost) await connection`ROLLBACK`.catch((failed) => (lost = connectionLost(failed)))
        throw error
      } finally {
        if (!lost) connection.release()
      }
    }
  })
}

/**
 * A row lock for a read that precedes a write, inside a transaction (`locking`); nothing outside one.
 * Made per query: postgres.js runs a fragment as part of the query it is placed in.
 */
export function rowLock(sql: Queryable, locking: boolean, mode: 'share' | 'update') {
  if (!locking) return sql``
  return mode === 'share' ? sql`FOR SHARE` : sql`FOR UPDATE`
}
