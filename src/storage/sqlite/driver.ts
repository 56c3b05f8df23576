/**
 * @module The SQLite driver, shaped like Kysely's `Driver` (kysely src/driver/driver.ts): the one
 * connection, whose turn it is on it, and transactions. Calls run one at a time, in order; a
 * transaction holds the turn from `BEGIN IMMEDIATE` to `COMMIT`, so a check-then-write (idempotency,
 * sequences) is atomic against this process's other calls, and the write lock taken first makes it
 * so against the file's other connection too (Bun's checkpoint worker). The connection's calls are
 * synchronous (connection.ts); only waiting for the turn, and for the write lock, are not.
 */
import { STALL_SPANS, spanSince, timed } from '../../stall-trace'
import type { SqliteConnection } from './connection'
import { asStorageError, isBusy } from './faults'

/** How long a transaction waits for the write lock that another connection holds before it fails as unavailable (busy_timeout's 5 s). */
const LOCK_WAIT_MS = 5_000

/** A transaction that found the write lock taken: it gave its turn back, and tries again. */
const LOCKED = Symbol('locked')

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

  /** In the turn, after `BEGIN IMMEDIATE`: the prelude, `work`, `COMMIT`; all rolled back when anything throws. */
  async function inTransaction<T>(work: (connection: SqliteConnection) => T | Promise<T>, prelude: Prelude | undefined, name: string): Promise<T> {
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
  }

  return {
    provideConnection,
    /**
     * Where the connection waits for no lock (Bun's, beside the checkpoint worker, which holds the
     * write lock while it starts the WAL anew), a transaction that finds it taken gives its turn back
     * and tries again a moment later: the thread, and the connection's reads, go on meanwhile.
     */
    async transaction(work, prelude, name = 'transaction') {
      const started = performance.now()
      let locked = false
      for (;;) {
        const outcome = await provideConnection(async () => {
          try {
            connection.exec('BEGIN IMMEDIATE')
          } catch (error) {
            if (!isBusy(error)) throw error
            if (performance.now() - started < LOCK_WAIT_MS) return LOCKED
            spanSince(STALL_SPANS.lockWait, started)
            throw error
          }
          if (locked) spanSince(STALL_SPANS.lockWait, started)
          return { result: await inTransaction(work, prelude, name) }
        })
        if (outcome !== LOCKED) return outcome.result
        locked = true
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
    },
    destroy: () =>
      provideConnection(async () => {
        await connection.checkpointer?.stop()
        // A worker's pass still finishing (its stop waits 1 s at most) is waited for, not skipped:
        // the WAL is truncated at shutdown.
        connection.exec('PRAGMA busy_timeout = 5000')
        connection.exec('PRAGMA wal_checkpoint(TRUNCATE)')
        connection.close()
      }),
  }
}
