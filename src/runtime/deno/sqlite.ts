/** @module The embedded database through `node:sqlite` (`DatabaseSync`), for the Deno entry. */
import { DatabaseSync } from 'node:sqlite'
import { connectionOver, type SqliteConnection } from '../../storage/sqlite/connection'

export function openEmbedded(path: string): SqliteConnection {
  const db = new DatabaseSync(path)
  return connectionOver(db, (sql) => db.prepare(sql))
}
