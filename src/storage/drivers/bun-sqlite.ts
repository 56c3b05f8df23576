/** @module SQLite through `bun:sqlite`, for the Bun entry and the compiled binary. */
import { Database } from 'bun:sqlite'
import { OPEN_PRAGMAS, type SqliteDriver, type SqlValue, type Statement } from '../driver'

export function openBunSqlite(path: string): SqliteDriver {
  const db = new Database(path, { create: true, readwrite: true })
  for (const pragma of OPEN_PRAGMAS) db.exec(pragma)
  return {
    exec: (sql) => void db.exec(sql),
    prepare<Row>(sql: string): Statement<Row> {
      const statement = db.query<Row, SqlValue[]>(sql)
      return {
        // bun:sqlite answers null for "no row"; the seam promises undefined.
        get: (...params) => statement.get(...params) ?? undefined,
        all: (...params) => statement.all(...params),
        run: (...params) => statement.run(...params),
      }
    },
    close: () => db.close(),
  }
}
