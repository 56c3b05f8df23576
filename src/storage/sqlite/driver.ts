/**
 * @module The few calls the SQLite engine makes of a driver: `bun:sqlite`, `better-sqlite3` or
 * `node:sqlite` (storage/drivers/, one per runtime); the SQL is shared.
 */

export type SqlValue = string | number | null

export interface Statement<Row> {
  get(...params: SqlValue[]): Row | undefined
  all(...params: SqlValue[]): Row[]
  run(...params: SqlValue[]): { changes: number }
}

export interface SqliteDriver {
  exec(sql: string): void
  prepare<Row = Record<string, SqlValue>>(sql: string): Statement<Row>
  close(): void
  /** Stops what the driver runs beside the connection (Bun's checkpoint worker) before the last checkpoint. */
  beforeClose?(): Promise<void>
}

/**
 * Runs `work` inside `BEGIN IMMEDIATE`, so that the write lock is taken before the first read:
 * a check-then-write (rate limit, idempotency) is atomic across processes sharing the file.
 */
export function immediate<T>(db: SqliteDriver, work: () => T): T {
  db.exec('BEGIN IMMEDIATE')
  try {
    const result = work()
    db.exec('COMMIT')
    return result
  } catch (error) {
    rollback(db)
    throw error
  }
}

/** SQLite has already rolled back after some errors (SQLITE_FULL, SQLITE_IOERR); the original error is the one to report. */
export function rollback(db: SqliteDriver): void {
  try {
    db.exec('ROLLBACK')
  } catch {
    // no transaction left to roll back
  }
}

/** Pragmas every driver applies on open: WAL for concurrent readers, a wait instead of SQLITE_BUSY. */
export const OPEN_PRAGMAS = [
  'PRAGMA journal_mode = WAL',
  'PRAGMA synchronous = NORMAL',
  'PRAGMA busy_timeout = 5000',
  'PRAGMA foreign_keys = ON',
]
