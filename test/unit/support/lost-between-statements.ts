/**
 * @module A transaction whose connection the server drops between two of its statements, on a pool
 * of one connection (storage-engines.test.ts). postgres.js 3.4.9 throws an uncaught TypeError for the
 * statement sent after the drop, which fails any bun test: so it runs here, in a process of its own,
 * and prints what happened as JSON.
 *
 *   bun lost-between-statements.ts DATABASE_URL ADMIN_URL [short|long]
 *
 * `long`: the statement after the drop is over 1 KiB, which postgres.js writes at once, failing
 * inside a promise nobody awaits instead of a `setImmediate`.
 */
import postgres from 'postgres'
import { inTransaction, openPool } from '../../../src/storage/postgres/driver'
import { guarded } from '../../../src/storage/postgres/faults'

const [url, adminUrl, size = 'short'] = process.argv.slice(2) as [string, string, string?]
const sql = openPool(url, 1)
const admin = postgres(adminUrl, { onnotice: () => {} })
await admin`SELECT 1`
const within = <T>(promise: Promise<T>) =>
  Promise.race([promise.catch((error) => ({ error: String(error) })), new Promise<string>((resolve) => setTimeout(resolve, 5_000, 'no answer'))])

let sentAfter = false
let terminatedAt = 0
const transaction = await guarded(() =>
  inTransaction(
    sql,
    async (tx) => {
      const [row] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`
      await admin`SELECT pg_terminate_backend(${row!.pid})`
      terminatedAt = Date.now()
      // Gone from the server, and a moment for this process to see its socket close.
      while ((await admin`SELECT 1 FROM pg_stat_activity WHERE pid = ${row!.pid}`).length > 0) await new Promise((resolve) => setTimeout(resolve, 20))
      await new Promise((resolve) => setTimeout(resolve, 200))
      await (size === 'long' ? tx.unsafe(`SELECT '${'x'.repeat(2_000)}'::text`) : tx`SELECT 1`)
      sentAfter = true
      await tx`SELECT 1`
    },
    // No deadline: what answers is the lost write being noticed.
    null,
  ),
).then(
  () => 'committed',
  (error) => error.constructor.name,
)
const answeredMs = Date.now() - terminatedAt
const pool = await within(sql`SELECT 1 AS one`)
const next = await within(inTransaction(sql, async (tx) => (await tx`SELECT 2 AS two`)[0]!.two))
console.log(JSON.stringify({ transaction, answeredMs, sentAfter, pool, next }))
await sql.end({ timeout: 1 })
await admin.end()
