/**
 * @module Part `pg`: the sandbox on PostgreSQL, one and two Bun instances sharing one database, plan
 * search and policy issue under wrk; with two, two wrk processes (half the connections each) load
 * one instance each, as a balancer would, and req/s is their sum. Starts its own PostgreSQL
 * (test/support/embedded-postgres.ts) unless BENCH_DATABASE_URL names one. The instances reach it through a
 * counting proxy. A statement is a query cycle the server ends with ReadyForQuery (postgres.js sends
 * each query with its own Sync); a round trip is a wait: the client sending while nothing it sent is
 * unanswered, so statements sent together (pipelined) are one. Round trips are counted for one
 * client sending one request after another, on one instance: under load, the pool pipelines other
 * requests' statements too. No pinning: PostgreSQL, the instances and wrk share the cores.
 */
import { createServer, connect, type Server as NetServer } from 'node:net'
import postgres from 'postgres'
import { startPostgres } from '../test/support/embedded-postgres'
import { freePort } from '../test/support/launch'
import { DATES, unexpected, wrk, type Mode } from './load'
import type { Bench } from './measure'

export interface PostgresRow {
  instances: number
  label: string
  rps: number
  p99Ms: number
  unexpected: number
  transactionsPerRequest: number
  statementsPerRequest: number
  /** One client, one request after another (one instance only; null with two). */
  roundTripsPerRequest: number | null
}

/** BENCH_DATABASE_URL's database, or a `bench` database on a PostgreSQL of our own (a durable one, as in production). */
async function database(): Promise<{ url: string; stop(): Promise<void> }> {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, stop: async () => {} }
  const server = await startPostgres({ user: 'bench', password: 'bench' })
  await server.createDatabase('bench')
  return { url: server.url('bench'), stop: () => server.stop() }
}

/** What the counting proxy has seen so far, on every connection. */
interface Counts {
  statements: number
  roundTrips: number
}

/** The PostgreSQL messages (a type byte, then a 4-byte length counting itself) in a stream, one chunk at a time. */
function messageTypes(untypedFirst: boolean) {
  let header = Buffer.alloc(0)
  let skip = 0
  let untyped = untypedFirst
  return (chunk: Buffer): number[] => {
    const types: number[] = []
    let at = 0
    while (at < chunk.length) {
      if (skip > 0) {
        const step = Math.min(skip, chunk.length - at)
        skip -= step
        at += step
        continue
      }
      // The start-up message alone has no type byte.
      const size = untyped ? 4 : 5
      const need = size - header.length
      header = Buffer.concat([header, chunk.subarray(at, at + need)])
      at += Math.min(need, chunk.length - at)
      if (header.length < size) break
      if (!untyped) types.push(header[0]!)
      skip = header.readInt32BE(size - 4) - 4
      header = Buffer.alloc(0)
      untyped = false
    }
    return types
  }
}

const SYNC = 0x53
const SIMPLE_QUERY = 0x51
const READY_FOR_QUERY = 0x5a

/** A TCP proxy to the database that counts statements (ReadyForQuery) and round trips (waits). */
async function countingProxy(target: URL): Promise<{ url: string; counts(): Counts; stop(): void }> {
  const counts: Counts = { statements: 0, roundTrips: 0 }
  const server: NetServer = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname)
    const sent = messageTypes(true)
    const answered = messageTypes(false)
    // Statements sent on this connection and not yet answered.
    let unanswered = 0
    client.on('data', (chunk: Buffer) => {
      const statements = sent(chunk).filter((type) => type === SYNC || type === SIMPLE_QUERY).length
      if (statements > 0 && unanswered === 0) counts.roundTrips++
      unanswered += statements
    })
    upstream.on('data', (chunk: Buffer) => {
      const ready = answered(chunk).filter((type) => type === READY_FOR_QUERY).length
      counts.statements += ready
      // The ReadyForQuery that ends authentication answers nothing the client sent.
      unanswered = Math.max(0, unanswered - ready)
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
  return { url: url.toString(), counts: () => ({ ...counts }), stop: () => void server.close() }
}

/**
 * Round trips per request for one partner sending `mode`'s requests one after another (after the
 * same set-up as sandbox.lua: a search, and an issued policy for modify).
 */
async function sequentialRoundTrips(url: string, mode: Mode, counts: () => Counts, requests = 100): Promise<number> {
  let cookie = ''
  const call = async (path: string, body: unknown) => {
    const response = await fetch(new URL(`/api/sandbox/${path}`, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.250.0.1', ...(cookie && { cookie }) },
      body: JSON.stringify(body),
    })
    cookie =
      response.headers
        .getSetCookie()
        .find((line) => line.startsWith('sbx_session='))
        ?.split(';')[0] ?? cookie
    const answer = (await response.json()) as any
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer.error)}`)
    return answer.data
  }
  const trip = { origin_country: 'IN', destination_country: 'FR', start_date: DATES.start, end_date: DATES.end }
  const travellers = [{ age: 34 }, { age: 8 }]
  const search = { trip, travellers, currency: 'EUR' }
  const planId = (await call('plans/search', search)).plans[0].plan_id
  const issue = { plan_id: planId, trip, travellers }
  const policyRef = mode === 'modify' ? (await call('policy/new', issue)).policy_ref : ''
  const next = (i: number): [string, unknown] => {
    if (mode === 'search') return ['plans/search', search]
    if (mode === 'issue') return ['policy/new', issue]
    return [`policy/${policyRef}/modify`, { scenario: i % 2 ? 'shorten_end_date' : 'extend_end_date', new_end_date: i % 2 ? DATES.end : DATES.end2 }]
  }
  const before = counts().roundTrips
  for (let i = 0; i < requests; i++) await call(...next(i))
  return (counts().roundTrips - before) / requests
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
      const instances = await Promise.all(
        Array.from({ length: count }, (_, index) =>
          harness.startServer({ name: `pg-${count}-${index}`, command: sandbox, env: { SANDBOX_DATABASE_URL: proxy.url }, pin: false }),
        ),
      )
      try {
        for (const [mode, label] of [
          ['search', 'plan search'],
          ['issue', 'policy issue'],
          ['modify', 'modify (extend/shorten)'],
        ] as [Mode, string][]) {
          const load = { connections: Math.max(1, Math.floor(options.connections / count)), pin: false }
          await Promise.all(instances.map((one) => wrk(harness, one.url, mode, options.warmup || 1, load)))
          const [xactsBefore, statementsBefore] = [await transactions(sql), proxy.counts().statements]
          const runs = await Promise.all(instances.map((one) => wrk(harness, one.url, mode, options.duration, load)))
          const [xactsAfter, statementsAfter] = [await transactions(sql), proxy.counts().statements]
          const requests = runs.reduce((sum, run) => sum + run.requests, 0)
          rows.push({
            instances: count,
            label,
            rps: runs.reduce((sum, run) => sum + run.rps, 0),
            p99Ms: Math.max(...runs.map((run) => run.p99_us / 1000)),
            unexpected: runs.reduce((sum, run) => sum + unexpected(mode, run), 0),
            // The counting connection's own query is one transaction; wrk's set-up requests are a few.
            transactionsPerRequest: (xactsAfter - xactsBefore - 1) / requests,
            statementsPerRequest: (statementsAfter - statementsBefore) / requests,
            roundTripsPerRequest: count === 1 ? await sequentialRoundTrips(instances[0]!.url, mode, proxy.counts) : null,
          })
          const row = rows.at(-1)!
          log(
            `  ${count} instance(s), ${label}: ${row.rps.toFixed(0)} req/s, p99 ${row.p99Ms.toFixed(2)} ms, ` +
              `${row.transactionsPerRequest.toFixed(2)} transactions, ${row.statementsPerRequest.toFixed(2)} statements` +
              `${row.roundTripsPerRequest === null ? '' : ` and ${row.roundTripsPerRequest.toFixed(2)} round trips`} per request`,
          )
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
