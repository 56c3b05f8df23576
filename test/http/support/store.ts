/**
 * @module Reading what a test's servers stored, on either engine: the PostgreSQL database of the
 * server's `SANDBOX_DB_PATH` on `pg` (postgres.ts), the SQLite file otherwise.
 *
 * Until the PostgreSQL engine is in, a `pg` server ignores SANDBOX_DATABASE_URL and writes the
 * SQLite file; its database then has no `sessions` table, and the file is read instead.
 */
import { databaseBytes, readDatabase } from './hardening'
import { databaseFor, queryDatabase } from './postgres'
import { HTTP_PORT, currentTarget } from './server'

export type Engine = 'postgres' | 'sqlite'

/** The engine that holds the data of the servers started on `dbPath`. */
export async function engineOf(dbPath: string): Promise<Engine> {
  if (currentTarget() !== 'pg') return 'sqlite'
  const [row] = await queryDatabase<{ ready: boolean }[]>(HTTP_PORT, databaseFor(HTTP_PORT, dbPath), `SELECT to_regclass('sessions') IS NOT NULL AS ready`)
  return row!.ready ? 'postgres' : 'sqlite'
}

/**
 * Rows of one read-only query, in SQL both engines speak. Counts come back as numbers (PostgreSQL
 * answers COUNT as a bigint string).
 */
export async function queryStore<T extends Record<string, unknown>>(dbPath: string, query: string): Promise<T[]> {
  const rows = (await engineOf(dbPath)) === 'postgres'
    ? [...await queryDatabase<Record<string, unknown>[]>(HTTP_PORT, databaseFor(HTTP_PORT, dbPath), query)]
    : readDatabase(dbPath, (db) => db.prepare(query).all() as Record<string, unknown>[])
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) =>
    [key, typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : typeof value === 'bigint' ? Number(value) : value]))) as T[]
}

/** `SELECT COUNT(*)` of a table (with an optional WHERE clause). */
export async function countRows(dbPath: string, table: string, where = ''): Promise<number> {
  const [row] = await queryStore<{ n: number }>(dbPath, `SELECT COUNT(*) AS n FROM ${table}${where ? ` WHERE ${where}` : ''}`)
  return Number(row!.n)
}

/**
 * Everything the store holds, as bytes to search (for values that must never be stored): the
 * SQLite file with its -wal and -shm, or every row of every table of the PostgreSQL database as
 * text (bytea shows as `\x` and hex).
 */
export async function storeBytes(dbPath: string): Promise<Buffer> {
  if ((await engineOf(dbPath)) === 'sqlite') return databaseBytes(dbPath)
  const database = databaseFor(HTTP_PORT, dbPath)
  const tables = await queryDatabase<{ name: string }[]>(HTTP_PORT, database, `
    SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
  const parts: string[] = []
  for (const { name } of tables) {
    const rows = await queryDatabase<{ row: string }[]>(HTTP_PORT, database, `SELECT t::text AS row FROM ${name} AS t`)
    parts.push(name, ...rows.map(({ row }) => row))
  }
  return Buffer.from(parts.join('\n'))
}
