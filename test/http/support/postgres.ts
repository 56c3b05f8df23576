/**
 * @module The PostgreSQL server of the `pg` project: where it is, and one database per sandbox
 * database path.
 *
 * `npm test` starts its own server (postgres-server.ts, a webServer of playwright.config.ts) on
 * HTTP_PORT + 60; `SANDBOX_TEST_DATABASE_URL=postgres://user:pass@host:port/any` names an existing
 * server instead (the user must be allowed to create and drop databases). Every database this run
 * makes is called `sandbox_<HTTP_PORT>_…`, so two runs on two ports never touch each other's, and
 * a run drops its port's leftovers when it starts.
 *
 * A server started by a test (server.ts `startServer`) gets the database that belongs to its
 * `SANDBOX_DB_PATH`: the same path (a restart, a second process on one file) is the same database,
 * and a path just handed out by `freshDatabasePath` is a new, empty one.
 */
import { createHash } from 'node:crypto'
import postgres from 'postgres'

/** Port of the embedded server npm test starts (when no existing server is named). */
export const postgresPort = (httpPort: number) => httpPort + 60

/** The login every database of this run is reached with; its path names the admin database. */
export function adminUrl(httpPort: number): URL {
  const named = process.env.SANDBOX_TEST_DATABASE_URL
  return new URL(named && named !== '' ? named : `postgres://postgres:sandbox@127.0.0.1:${postgresPort(httpPort)}/postgres`)
}

/** Whether `npm test` must start its own server. */
export const startsOwnServer = () => !process.env.SANDBOX_TEST_DATABASE_URL

export const databasePrefix = (httpPort: number) => `sandbox_${httpPort}_`

/** The shared database of the `pg` project's two instances. */
export const sharedDatabase = (httpPort: number) => `${databasePrefix(httpPort)}shared`

/** The database that stands for a sandbox database path (a SQLite file path on the other targets). */
export const databaseFor = (httpPort: number, dbPath: string) => `${databasePrefix(httpPort)}${createHash('sha256').update(dbPath).digest('hex').slice(0, 16)}`

/** `SANDBOX_DATABASE_URL` for one database of this run. */
export function databaseUrl(httpPort: number, database: string): string {
  const url = adminUrl(httpPort)
  url.pathname = `/${database}`
  return url.toString()
}

/** Runs `work` with a one-connection client on the admin database, then closes it. */
export async function withAdmin<T>(httpPort: number, work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(adminUrl(httpPort).toString(), { max: 1, onnotice: () => {}, connect_timeout: 10 })
  try {
    return await work(sql)
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** Creates `database`; with `fresh`, drops an earlier one of that name first (its sessions ended). */
export async function ensureDatabase(httpPort: number, database: string, fresh: boolean): Promise<void> {
  await withAdmin(httpPort, async (sql) => {
    if (fresh) await sql`DROP DATABASE IF EXISTS ${sql(database)} WITH (FORCE)`
    try {
      await sql`CREATE DATABASE ${sql(database)}`
    } catch (error) {
      // 42P04 duplicate_database: a restart, or a second process on the same path.
      if (fresh || (error as { code?: string }).code !== '42P04') throw error
    }
  })
}

/** Drops every database of this run's port (leftovers of an earlier run); answers how many. */
export async function dropRunDatabases(httpPort: number): Promise<number> {
  return withAdmin(httpPort, async (sql) => {
    const rows = await sql<{ datname: string }[]>`
      SELECT datname FROM pg_database WHERE starts_with(datname, ${databasePrefix(httpPort)})`
    for (const { datname } of rows) await sql`DROP DATABASE IF EXISTS ${sql(datname)} WITH (FORCE)`
    return rows.length
  })
}

/** Runs one query on a database of this run (for checks of what the server stored). */
export async function queryDatabase<T extends readonly object[]>(httpPort: number, database: string, query: string): Promise<T> {
  const sql = postgres(databaseUrl(httpPort, database), { max: 1, onnotice: () => {}, connect_timeout: 10 })
  try {
    return (await sql.unsafe(query)) as unknown as T
  } finally {
    await sql.end({ timeout: 5 })
  }
}
