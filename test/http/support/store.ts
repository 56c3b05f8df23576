/**
 * @module Reading what a test's servers stored, on either engine: the PostgreSQL database of the
 * server's `SANDBOX_DB_PATH` on `pg` (postgres.ts), the SQLite file otherwise.
 */
import Database from 'better-sqlite3'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { databaseFor, queryDatabase } from './postgres'
import { HTTP_PORT, currentTarget } from './server'

/**
 * The engine that holds the data of this target's servers: the target's, never guessed from what
 * is there (a server that wrote elsewhere must fail the reads, not be read elsewhere).
 */
export function engine(): 'postgres' | 'sqlite' {
  return currentTarget() === 'pg' ? 'postgres' : 'sqlite'
}

/**
 * Rows of one read-only query, in SQL both engines speak. Counts come back as numbers (PostgreSQL
 * answers COUNT as a bigint string).
 */
export async function queryStore<T extends Record<string, unknown>>(dbPath: string, query: string): Promise<T[]> {
  const rows =
    engine() === 'postgres'
      ? [...(await queryDatabase<Record<string, unknown>[]>(HTTP_PORT, databaseFor(HTTP_PORT, dbPath), query))]
      : readDatabase(dbPath, (db) => db.prepare(query).all() as Record<string, unknown>[])
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : typeof value === 'bigint' ? Number(value) : value,
      ]),
    ),
  ) as T[]
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
  if (engine() === 'sqlite') return databaseBytes(dbPath)
  const database = databaseFor(HTTP_PORT, dbPath)
  const tables = await queryDatabase<{ name: string }[]>(
    HTTP_PORT,
    database,
    `
    SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  )
  const parts: string[] = []
  for (const { name } of tables) {
    const rows = await queryDatabase<{ row: string }[]>(HTTP_PORT, database, `SELECT t::text AS row FROM ${name} AS t`)
    parts.push(name, ...rows.map(({ row }) => row))
  }
  return Buffer.from(parts.join('\n'))
}

/** Size of the -wal file, or null when there is none. */
export function walSize(path: string): number | null {
  return existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : null
}

/** Opens the database read-only (better-sqlite3: Playwright runs under Node) for a query or two. */
export function readDatabase<T>(path: string, work: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    return work(db)
  } finally {
    db.close()
  }
}

/** Every byte of the database file and its -wal and -shm companions, as one buffer. */
export function databaseBytes(path: string): Buffer {
  return Buffer.concat(['', '-wal', '-shm'].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix)))
}
