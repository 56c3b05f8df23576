/**
 * @module Part `pg`: the sandbox on PostgreSQL, one and two Bun instances sharing one database, plan
 * search and policy issue under wrk; with two, two wrk processes (half the connections each) load
 * one instance each, as a balancer would, and req/s is their sum. Starts its own PostgreSQL
 * (bench/embedded-postgres.ts) unless BENCH_DATABASE_URL names one. The instances reach it through a counting
 * proxy: every query cycle the server ends with ReadyForQuery is one round trip (postgres.js
 * sends each query with its own Sync). No pinning: PostgreSQL, the instances and wrk share the cores.
 */
import { createServer, connect, type Server as NetServer } from 'node:net'
import postgres from 'postgres'
import { startPostgres } from './embedded-postgres'
import { freePort } from './launch'
import { unexpected, wrk, type Mode } from './load'
import type { Bench } from './measure'

export interface PostgresRow {
  instances: number
  label: string
  rps: number
  p99Ms: number
  unexpected: number
  transactionsPerRequest: number
  roundTripsPerRequest: number
}

/** BENCH_DATABASE_URL's database, or a `bench` database on a PostgreSQL of our own (a durable one, as in production). */
async function database(): Promise<{ url: string; stop(): Promise<void> }> {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, stop: async () => {} }
  const server = await startPostgres({ user: 'bench', password: 'bench' })
  await server.createDatabase('bench')
  return { url: server.url('bench'), stop: () => server.stop() }
}

/** A TCP proxy to the database that counts the server's ReadyForQuery messages ('Z'). */
async function countingProxy(target: URL): Promise<{ url: string; roundTrips(): number; stop(): void }> {
  let roundTrips = 0
  const server: NetServer = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname)
    let header = Buffer.alloc(0)
    let skip = 0
    upstream.on('data', (chunk: Buffer) => {
      // Messages: a type byte and a 4-byte length (counting itself), then the rest.
      let at = 0
      while (at < chunk.length) {
        if (skip > 0) {
          const step = Math.min(skip, chunk.length - at)
          skip -= step
          at += step
          continue
        }
        const need = 5 - header.length
        header = Buffer.concat([header, chunk.subarray(at, at + need)])
        at += Math.min(need, chunk.length - at)
        if (header.length < 5) break
        if (header[0] === 0x5a) roundTrips++
        skip = header.readInt32BE(1) - 4
        header = Buffer.alloc(0)
      }
    })
    client.pipe(upstream)
    upstream.pipe(client)
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
  })
  const port = await freePort()
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done))
  const url = new URL(target)
  url.hostname = '127.0.0.1'
  url.port = String(port)
  return { url: url.toString(), roundTrips: () => roundTrips, stop: () => void server.close() }
}

async function transactions(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ n: string }[]>`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`
  return Number(row!.n)
}

export async function runPostgres(bench: Bench, sandbox: string[]): Promise<PostgresRow[]> {
  const { harness, options, log } = bench
  log('- pg: PostgreSQL, one and two instances')
  const db = await database()
  const proxy = await countingProxy(new URL(db.url))
  const sql = postgres(db.url, { max: 1, onnotice: () => {} })
  const rows: PostgresRow[] = []
  try {
    for (const count of [1, 2]) {
      const instances = await Promise.all(Array.from({ length: count }, (_, index) =>
        harness.startServer({ name: `pg-${count}-${index}`, command: sandbox, env: { SANDBOX_DATABASE_URL: proxy.url }, pin: false })))
      try {
        for (const [mode, label] of [['search', 'plan search'], ['issue', 'policy issue']] as [Mode, string][]) {
          const load = { connections: Math.max(1, Math.floor(options.connections / count)), pin: false }
          await Promise.all(instances.map((one) => wrk(harness, one.url, mode, options.warmup || 1, load)))
          const [xactsBefore, tripsBefore] = [await transactions(sql), proxy.roundTrips()]
          const runs = await Promise.all(instances.map((one) => wrk(harness, one.url, mode, options.duration, load)))
          const [xactsAfter, tripsAfter] = [await transactions(sql), proxy.roundTrips()]
          const requests = runs.reduce((sum, run) => sum + run.requests, 0)
          rows.push({
            instances: count,
            label,
            rps: runs.reduce((sum, run) => sum + run.rps, 0),
            p99Ms: Math.max(...runs.map((run) => run.p99_us / 1000)),
            unexpected: runs.reduce((sum, run) => sum + unexpected(mode, run), 0),
            // The counting connection's own query is one transaction; wrk's set-up requests are a few.
            transactionsPerRequest: (xactsAfter - xactsBefore - 1) / requests,
            roundTripsPerRequest: (tripsAfter - tripsBefore) / requests,
          })
          const row = rows.at(-1)!
          log(`  ${count} instance(s), ${label}: ${row.rps.toFixed(0)} req/s, p99 ${row.p99Ms.toFixed(2)} ms, ` +
            `${row.transactionsPerRequest.toFixed(2)} transactions and ${row.roundTripsPerRequest.toFixed(2)} round trips per request`)
        }
      } finally {
        await Promise.all(instances.map((one) => one.stop()))
      }
    }
  } finally {
    await sql.end()
    proxy.stop()
    await db.stop()
  }
  return rows
}
