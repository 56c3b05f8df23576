/**
 * @module Transactions on a reserved connection. Not `sql.begin`: in postgres.js 3.4.9 a `BEGIN` that
 * fills a connection's pipeline is sent without reserving the connection (porsager/postgres#823,
 * #1189; seen here as UNSAFE_TRANSACTION 500s under 300 concurrent idempotent calls), and the open
 * transaction can then go back to the pool with other requests' queries inside it. A connection taken
 * with `reserve()` is ours before any byte is written.
 */
import type { ReservedSql, Sql } from 'postgres'

export type Connection = ReservedSql<any>

/** Runs `work` between BEGIN and COMMIT on one reserved connection; ROLLBACK when it throws. */
export async function inTransaction<T>(sql: Sql<any>, work: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await sql.reserve()
  try {
    await connection`BEGIN`
    const result = await work(connection)
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
