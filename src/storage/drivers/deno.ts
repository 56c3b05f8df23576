/** @module The embedded database through `node:sqlite` (`DatabaseSync`), for the Deno entry. */
import { DatabaseSync } from 'node:sqlite'
import { OPEN_PRAGMAS, type SqliteDriver, type Statement } from '../sqlite/driver'

export function openEmbedded(path: string): SqliteDriver {
  const db = new DatabaseSync(path)
  for (const pragma of OPEN_PRAGMAS) db.exec(pragma)
  return {
    exec: (sql) => db.exec(sql),
    prepare<Row>(sql: string): Statement<Row> {
      const statement = db.prepare(sql)
      return {
        get: (...params) => statement.get(...params) as Row | undefined,
        all: (...params) => statement.all(...params) as Row[],
        run: (...params) => ({ changes: Number(statement.run(...params).changes) }),
      }
    },
    close: () => db.close(),
  }
}
