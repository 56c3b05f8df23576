/**
 * @module The connection the SQLite engine uses: the few calls it makes of `bun:sqlite`,
 * `better-sqlite3` or `node:sqlite` (one adapter per runtime, src/runtime/{bun,node,deno}/sqlite.ts; the SQL is
 * shared). Who may use the connection when, and its transactions, are the driver's (driver.ts).
 */

export type SqlValue = string | number | null

export interface Statement<Row> {
  get(...params: SqlValue[]): Row | undefined
  all(...params: SqlValue[]): Row[]
  run(...params: SqlValue[]): { changes: number }
}

export interface SqliteConnection {
  exec(sql: string): void
  prepare<Row = Record<string, SqlValue>>(sql: string): Statement<Row>
  close(): void
  /** What a runtime runs beside the connection to copy the WAL back (Bun's worker); absent elsewhere. */
  checkpointer?: Checkpointer
}

/** A checkpointer beside the connection: the engine waits for it (the sweep) and stops it (close). */
export interface Checkpointer {
  /**
   * Resolves once the WAL is small or copied back, so that a background writer (the sweep) goes no
   * faster than the checkpointer, or after `mostWaitMs` (2 s by default).
   */
  settled(mostWaitMs?: number): Promise<void>
  /** Stops it, before the last checkpoint at close. */
  stop(): Promise<void>
}

/** A runtime's own database handle: what the three libraries have in common. */
interface RuntimeDatabase {
  exec(sql: string): unknown
  close(): unknown
}

/** A runtime's own prepared statement; its answers are typed by the caller. */
interface RuntimeStatement {
  get(...params: SqlValue[]): unknown
  all(...params: SqlValue[]): unknown[]
  run(...params: SqlValue[]): { changes: number | bigint }
}

/** Pragmas every connection gets on open: WAL for concurrent readers, a wait instead of SQLITE_BUSY. */
const OPEN_PRAGMAS = ['PRAGMA journal_mode = WAL', 'PRAGMA synchronous = NORMAL', 'PRAGMA busy_timeout = 5000', 'PRAGMA foreign_keys = ON']

/**
 * The connection over a runtime's open database, its pragmas applied. The libraries differ only in
 * how they prepare (`prepare`), in "no row" (`bun:sqlite` answers null, the seam undefined) and in
 * `changes` (`node:sqlite` answers a bigint).
 */
export function connectionOver(db: RuntimeDatabase, prepare: (sql: string) => RuntimeStatement): Omit<SqliteConnection, 'checkpointer'> {
  for (const pragma of OPEN_PRAGMAS) db.exec(pragma)
  return {
    exec: (sql) => void db.exec(sql),
    prepare<Row>(sql: string): Statement<Row> {
      const statement = prepare(sql)
      return {
        get: (...params) => (statement.get(...params) ?? undefined) as Row | undefined,
        all: (...params) => statement.all(...params) as Row[],
        run: (...params) => ({ changes: Number(statement.run(...params).changes) }),
      }
    },
    close: () => void db.close(),
  }
}
