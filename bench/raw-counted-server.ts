/**
 * A second reference for bench/run.ts: the raw server of raw-server.ts plus the one thing the
 * contract makes every admitted request do, counting it in SQLite against its session and its
 * network (the project's own rateLimitStore and schema, on a file in WAL mode). The gap between the
 * two is the price of that write on this machine; the sandbox cannot be faster than this one.
 *
 *   PORT=4000 HOST=127.0.0.1 BENCH_BODY_FILE=answer.json SANDBOX_DB_PATH=counted.db bun bench/raw-counted-server.ts
 */
import { readFileSync } from 'node:fs'
import { openBunSqlite } from '../src/storage/drivers/bun-sqlite'
import { migrate } from '../src/storage/migrations'
import { rateLimitStore } from '../src/storage/rate-limits'

const body = readFileSync(process.env.BENCH_BODY_FILE ?? '/dev/null')
const headers = { 'content-type': 'application/json;charset=utf-8' }
const path = process.env.SANDBOX_DB_PATH ?? 'counted.db'
const db = openBunSqlite(path)
migrate(db)
// Checkpoints in a worker thread, as the Bun entry (src/server.bun.ts) runs them.
db.exec('PRAGMA wal_autocheckpoint = 10000')
const checkpointer = new Worker(new URL('../src/storage/drivers/bun-checkpointer.ts', import.meta.url).href)
checkpointer.postMessage({ start: { path, everyMs: 200 } })
const rates = rateLimitStore(db, { limit: 1_000_000_000, windowMs: 600_000 })
const server = Bun.serve({
  port: Number(process.env.PORT ?? 4000),
  hostname: process.env.HOST ?? '127.0.0.1',
  fetch(request) {
    // wrk gives each connection its own X-Forwarded-For: one session and one network per connection.
    const partner = request.headers.get('x-forwarded-for') ?? 'unknown'
    rates.admit([`s:${partner}`, `n:${partner}`], Date.now(), () => ({ admitted: true }))
    return new Response(body, { headers })
  },
})
console.log(JSON.stringify({ msg: 'listening', url: server.url.toString(), body_bytes: body.length }))
process.on('SIGTERM', () => {
  server.stop(true)
  checkpointer.terminate()
  db.close()
  process.exit(0)
})
