/** @module The embedded database through `better-sqlite3`, for the Node entry. */
import Database from 'better-sqlite3'
import { connectionOver, type SqliteConnection, type SqlValue } from '../../storage/sqlite/connection'

export function openEmbedded(path: string): SqliteConnection {
  const db = new Database(path)
  return connectionOver(db, (sql) => db.prepare<SqlValue[]>(sql))
}
