/**
 * @module The SQLite driver, shaped like Kysely's `Driver` (kysely src/driver/driver.ts): the one
 * connection and whose turn it is on it (`acquireConnection`, `releaseConnection`), transactions,
 * savepoints, and group commit, which is built on them. Transactions are `BEGIN IMMEDIATE`: the write
 * lock is taken before the first read, so a check-then-write (idempotency, sequences) is atomic
 * against the file's other connection (Bun's checkpoint worker). Unlike Kysely's, the transaction calls are synchronous, as the
 * connection's are (storage/drivers/): only waiting for the turn is not.
 */
import type { SqliteConnection } from '../drivers/connection'
import { asStorageError } from './faults'

function beginTransaction(connection: SqliteConnection): void {
  connection.exec('BEGIN IMMEDIATE')
}

function commitTransaction(connection: SqliteConnection): void {
  connection.exec('COMMIT')
}

/** SQLite has already rolled back after some errors (SQLITE_FULL, SQLITE_IOERR); the original error is the one to report. */
function rollbackTransaction(connection: SqliteConnection): void {
  try {
    connection.exec('ROLLBACK')
  } catch {
    // no transaction left to roll back
  }
}

function savepoint(connection: SqliteConnection, name: string): void {
  connection.exec(`SAVEPOINT ${name}`)
}

function releaseSavepoint(connection: SqliteConnection, name: string): void {
  connection.exec(`RELEASE ${name}`)
}

/** Rolls back to the savepoint and leaves it; false when the transaction is already gone. */
function rollbackToSavepoint(connection: SqliteConnection, name: string): boolean {
  try {
    connection.exec(`ROLLBACK TO ${name}`)
    releaseSavepoint(connection, name)
    return true
  } catch {
    return false
  }
}

/** Runs `work` in one transaction, rolled back when it throws. The caller holds the turn (or nothing else runs yet). */
export function inTransaction<T>(connection: SqliteConnection, work: () => T): T {
  beginTransaction(connection)
  try {
    const result = work()
    commitTransaction(connection)
    return result
  } catch (error) {
    rollbackTransaction(connection)
    throw error
  }
}

/** One write waiting for its batch (group commit). */
export interface Member<T> {
  /** The member's reads and writes, inside the batch's transaction and its own savepoint. */
  work: () => T | Promise<T>
  /** The transaction writes everything the prelude holds (a write-behind), not only what writes refer to. */
  everything?: boolean
}

/**
 * What every transaction writes first, outside its members' savepoints: what memory holds that the
 * file does not yet (write-behind.ts), all of it when a member asks (`everything`), else what the
 * members' writes may depend on. Told how the transaction ended, so that what it wrote is dropped
 * from memory once committed, and kept for the next one if not.
 */
export interface Prelude {
  write(everything: boolean): { committed(): void; rolledBack(): void }
}

export interface SqliteDriver {
  /**
   * Waits for the connection's turn and answers the connection: calls run one at a time, in order,
   * and the holder's own awaits keep the turn (a transaction's awaits must not let another
   * request's statements into it). Hand the turn on with `releaseConnection`.
   */
  acquireConnection(): Promise<SqliteConnection>
  releaseConnection(): void
  /** `work` in its turn, the turn held until it settles; storage faults as `StorageUnavailable`. */
  provideConnection<T>(work: (connection: SqliteConnection) => T | Promise<T>): Promise<T>
  /**
   * Group commit: a write that joins others waiting shares their `BEGIN IMMEDIATE … COMMIT`, in a
   * savepoint of its own; it settles once its batch committed (or failed).
   */
  groupCommit<T>(member: Member<T>): Promise<T>
  /** Once every call before it is done: stops what runs beside the connection, checkpoints, closes. */
  destroy(): Promise<void>
}

export function sqliteDriver(connection: SqliteConnection, prelude?: Prelude): SqliteDriver {
  let tail: Promise<void> = Promise.resolve()
  let handOn = () => {}

  async function acquireConnection(): Promise<SqliteConnection> {
    const before = tail
    let release = () => {}
    tail = new Promise((resolve) => (release = resolve))
    await before
    handOn = release
    return connection
  }

  function releaseConnection(): void {
    handOn()
  }

  async function provideConnection<T>(work: (connection: SqliteConnection) => T | Promise<T>): Promise<T> {
    const held = await acquireConnection()
    try {
      return await work(held)
    } catch (error) {
      throw asStorageError(error)
    } finally {
      releaseConnection()
    }
  }

  return {
    acquireConnection,
    releaseConnection,
    provideConnection,
    groupCommit: groupCommit((run) => void provideConnection(run), prelude),
    destroy: () =>
      provideConnection(async () => {
        await connection.beforeClose?.()
        connection.exec('PRAGMA wal_checkpoint(TRUNCATE)')
        connection.close()
      }),
  }
}

interface Queued {
  member: Member<unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/** Most members in one transaction: the connection is held for the whole batch. */
const MOST_PER_BATCH = 64

/**
 * Group commit. Why: a commit (WAL append and its bookkeeping) is a large share of a write's cost;
 * measured with the rate-limit writes of the time alone, ≈ 15 µs per request with one transaction
 * each, ≈ 8 µs with 16 per transaction. The batch holds the connection's turn while its members read
 * and write, so check-then-writes stay exact, and a failing member rolls back only its own
 * savepoint. A batch forms from everything joined before the microtask queue drains, or while the
 * previous batch held the connection; alone, a member commits at once, without a savepoint. Under
 * steady load each request reaches its transaction in its own turn, so most batches hold one
 * member (bench/README.md).
 * Not the next macrotask (setImmediate), though it batched more (policy issue 5.8k against 4.2k req/s,
 * `bun bench/run.ts --quick --duration 5 --only c,d`): an answer pending across a turn makes Bun drop
 * requests pipelined behind it (oven-sh/bun#38128), which simulation mode must not do.
 */
function groupCommit(inTurn: (run: (connection: SqliteConnection) => Promise<void>) => void, prelude?: Prelude) {
  const queue: Queued[] = []
  let scheduled = false

  function schedule() {
    if (scheduled) return
    scheduled = true
    queueMicrotask(() => inTurn(takeBatch))
  }

  async function takeBatch(connection: SqliteConnection) {
    scheduled = false
    const batch = queue.splice(0, MOST_PER_BATCH)
    if (queue.length > 0) schedule()
    await runBatch(connection, batch, prelude)
  }

  return function join<T>(member: Member<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ member, resolve: resolve as (value: unknown) => void, reject })
      schedule()
    })
  }
}

/** Members run one after another in one transaction; each is settled once the transaction ends. */
async function runBatch(connection: SqliteConnection, batch: Queued[], prelude?: Prelude): Promise<void> {
  const done: { queued: Queued; value: unknown }[] = []
  const alone = batch.length === 1
  let open: ReturnType<Prelude['write']> | null = null
  for (const [index, queued] of batch.entries()) {
    if (!open) {
      try {
        open = begin(
          connection,
          prelude,
          batch.slice(index).some((waiting) => waiting.member.everything),
        )
      } catch (error) {
        // The lock did not come within busy_timeout, or the file takes no write: the rest of the
        // batch would fail as well.
        for (const waiting of batch.slice(index)) waiting.reject(asStorageError(error))
        return
      }
    }
    try {
      if (!alone) savepoint(connection, 'member')
      const value = await queued.member.work()
      if (!alone) releaseSavepoint(connection, 'member')
      done.push({ queued, value })
    } catch (error) {
      queued.reject(asStorageError(error))
      if (alone || !rollbackToSavepoint(connection, 'member')) {
        // SQLite rolled the whole transaction back (SQLITE_FULL, SQLITE_IOERR): the members before
        // this one lost their writes too, and are told so; the rest start a new transaction.
        rollbackTransaction(connection)
        open.rolledBack()
        for (const lost of done.splice(0)) lost.queued.reject(asStorageError(error))
        open = null
      }
    }
  }
  if (open) commit(connection, done, open)
}

/** `BEGIN IMMEDIATE`, then the prelude's writes; rolled back if they fail. */
function begin(connection: SqliteConnection, prelude: Prelude | undefined, everything: boolean): ReturnType<Prelude['write']> {
  beginTransaction(connection)
  if (!prelude) return { committed() {}, rolledBack() {} }
  try {
    return prelude.write(everything)
  } catch (error) {
    rollbackTransaction(connection)
    throw error
  }
}

function commit(connection: SqliteConnection, done: { queued: Queued; value: unknown }[], ended: ReturnType<Prelude['write']>): void {
  try {
    commitTransaction(connection)
  } catch (error) {
    rollbackTransaction(connection)
    ended.rolledBack()
    for (const { queued } of done) queued.reject(asStorageError(error))
    return
  }
  ended.committed()
  for (const { queued, value } of done) queued.resolve(value)
}
