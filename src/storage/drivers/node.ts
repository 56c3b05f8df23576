/** @module The embedded database through `better-sqlite3`, for the Node entry. */
import Database from 'better-sqlite3'
import { OPEN_PRAGMAS, type SqliteDriver, type SqlValue, type Statement } from '../sqlite/driver'

export function openEmbedded(path: string): SqliteDriver {
  const db = new Database(path)
  for (const pragma of OPEN_PRAGMAS) db.exec(pragma)
  return {
    exec: (sql) => void db.exec(sql),
    prepare<Row>(sql: string): Statement<Row> {
      const statement = db.prepare<SqlValue[], Row>(sql)
      return {
        get: (...params) => statement.get(...params),
        all: (...params) => statement.all(...params),
        run: (...params) => statement.run(...params),
      }
    },
    close: () => db.close(),
  }
}
