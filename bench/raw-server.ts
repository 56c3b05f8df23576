/**
 * The ceiling for bench/run.ts: a bare `Bun.serve` that answers every request with one fixed JSON
 * body (a real plan-search answer captured from the sandbox, so the same size on the wire), without
 * routing, sessions, SQLite or logging. It does not read the request body.
 *
 *   PORT=4000 HOST=127.0.0.1 BENCH_BODY_FILE=answer.json bun bench/raw-server.ts
 */
import { readFileSync } from 'node:fs'

const body = readFileSync(process.env.BENCH_BODY_FILE ?? '/dev/null')
const headers = { 'content-type': 'application/json;charset=utf-8' }
const server = Bun.serve({
  port: Number(process.env.PORT ?? 4000),
  hostname: process.env.HOST ?? '127.0.0.1',
  fetch: () => new Response(body, { headers }),
})
console.log(JSON.stringify({ msg: 'listening', url: server.url.toString(), body_bytes: body.length }))
process.on('SIGTERM', () => {
  server.stop(true)
  process.exit(0)
})
