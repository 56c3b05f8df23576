/**
 * @module The SQLite driver, shaped like Kysely's `Driver` (kysely src/driver/driver.ts): the one
 * connection, whose turn it is on it, and transactions. Calls run one at a time, in order; a
 * transaction holds the turn from `BEGIN IMMEDIATE` to `COMMIT`, so a check-then-write (idempotency,
 * sequences) is atomic against this process's other calls, and the write lock taken first makes it
 * so against the file's other connection too (Bun's checkpoint worker). The connection's calls are
 * synchronous (connection.ts); only waiting for the turn, and for the write lock, are not.
 */
import { spanSince, timed } from '../../stall-trace'
import type { SqliteConnection } from './connection'
import { asStorageError, isBusy } from './faults'

/** The stall trace's name for a transaction's wait for the write lock: the request waited, the thread did not. */
const WAITED = 'waiting for the write lock'

/** How long a transaction waits for the write lock that another connection holds before it fails as unavailable (busy_timeout's 5 s). */
const LOCK_WAIT_MS = 5_000

/**
 * `BEGIN IMMEDIATE`, waiting for the write lock between turns of the event loop, not inside SQLite:
 * where the connection waits for no lock (Bun's, beside the checkpoint worker, which holds it while
 * it restarts the WAL), requests that do not write go on meanwhile.
 */
async function begin(connection: SqliteConnection): Promise<void> {
  const started = performance.now()
  const until = started + LOCK_WAIT_MS
  for (let waited = false; ; waited = true) {
    try {
      connection.exec('BEGIN IMMEDIATE')
      if (waited) spanSince(WAITED, started)
      return
    } catch (error) {
      if (!isBusy(error) || performance.now() > until) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** SQLite has already rolled back after some errors (SQLITE_FULL, SQLITE_IOERR); the original error is the one to report. */
function rollback(connection: SqliteConnection): void {
  try {
    connection.exec('ROLLBACK')
  } catch {
    // no transaction left to roll back
  }
}

/**
 * What a transaction writes first, after `BEGIN` (the engine's unwritten rows, write-behind.ts);
 * told, still in the transaction's turn, how it ended: rolled back, so that what it wrote is kept
 * for the next one; committed, so that memory may follow the file.
 */
export type Prelude = () => { rolledBack(): void; committed?(): void }

export interface SqliteDriver {
  /**
   * `work` in its turn, the turn held until it settles (its awaits keep it: a transaction's awaits
   * must not let another request's statements into it); storage faults as `StorageUnavailable`.
   */
  provideConnection<T>(work: (connection: SqliteConnection) => T | Promise<T>): Promise<T>
  /**
   * The one way into a transaction: in its turn, `BEGIN IMMEDIATE`, the prelude, `work`, `COMMIT`;
   * rolled back, prelude and all, when anything in it throws. `name`: what it is, as the stall
   * trace times it (stall-trace.ts).
   */
  transaction<T>(work: (connection: SqliteConnection) => T | Promise<T>, prelude?: Prelude, name?: string): Promise<T>
  /** Once every call before it is done: stops what runs beside the connection, checkpoints, closes. */
  destroy(): Promise<void>
}

export function sqliteDriver(connection: SqliteConnection): SqliteDriver {
  let tail: Promise<void> = Promise.resolve()

  async function provideConnection<T>(work: (connection: SqliteConnection) => T | Promise<T>): Promise<T> {
    const before = tail
    let release = () => {}
    tail = new Promise((resolve) => (release = resolve))
    await before
    try {
      return await work(connection)
    } catch (error) {
      throw asStorageError(error)
    } finally {
      release()
    }
  }

  return {
    provideConnection,
    transaction: (work, prelude, name = 'transaction') =>
      provideConnection(async () => {
        await begin(connection)
        const started = performance.now()
        let written: ReturnType<Prelude> | undefined
        try {
          written = prelude && timed(`${name}: unwritten rows`, prelude)
          const result = await work(connection)
          timed(`${name}: commit`, () => connection.exec('COMMIT'))
          written?.committed?.()
          spanSince(name, started)
          return result
        } catch (error) {
          rollback(connection)
          written?.rolledBack()
          throw error
        }
      }),
    destroy: () =>
      provideConnection(async () => {
        await connection.checkpointer?.stop()
        connection.exec('PRAGMA wal_checkpoint(TRUNCATE)')
        connection.close()
      }),
  }
}
