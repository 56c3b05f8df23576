/**
 * @module SANDBOX_WORKERS: plan search with one and two processes on one port and one database (no
 * pinning: the servers and wrk share both cores), and the rate limit's exactness across two workers.
 */
import { DATES, wrk } from './load'
import type { Bench } from './measure'
import { childPids, cpuSeconds, socketCount } from './processes'

export interface WorkersResult {
  throughput: { workers: number; rps: number; p99_ms: number; non2xx: number; cpuShares: string }[]
  exact: { limit: number; concurrent: number; admitted: number; refused: number; other: number; sockets: string }
}

export async function multiProcess(bench: Bench, sandbox: string[]): Promise<WorkersResult> {
  const { harness, options, log } = bench
  const throughput: WorkersResult['throughput'] = []
  const connections = Math.max(options.connections, 8)
  for (const workers of [1, 2]) {
    log(`- SANDBOX_WORKERS=${workers}, plan search, no pinning, ${connections} connections`)
    const server = await harness.startServer({ name: `workers-${workers}`, command: sandbox, env: { SANDBOX_WORKERS: String(workers) }, pin: false, expectListening: workers })
    try {
      if (options.warmup > 0) await wrk(harness, server.url, 'search', options.warmup, { connections, pin: false })
      const pids = [server.pid, ...childPids(server.pid)]
      const before = pids.map(cpuSeconds)
      const result = await wrk(harness, server.url, 'search', options.duration, { connections, pin: false })
      const used = pids.map((pid, index) => cpuSeconds(pid) - before[index]!)
      const total = used.reduce((a, b) => a + b, 0)
      throughput.push({
        workers,
        rps: result.rps,
        p99_ms: result.p99_us / 1000,
        non2xx: result.nother + result.n429 + result.socket_errors + result.timeouts,
        cpuShares: used.map((cpu) => `${((cpu / total) * 100).toFixed(0)}%`).join(' / '),
      })
      log(`  ${result.rps.toFixed(0)} req/s, p99 ${(result.p99_us / 1000).toFixed(2)} ms, CPU split ${throughput.at(-1)!.cpuShares}`)
    } finally {
      await server.stop()
    }
  }

  // Exactness: one session, `concurrent` requests at once over as many connections, limit 50.
  const limit = 50
  const concurrent = 200
  log(`- rate limit across 2 workers: SANDBOX_RATE_LIMIT=${limit}, 1 session opened, then ${concurrent} concurrent searches on it`)
  const server = await harness.startServer({ name: 'workers-exact', command: sandbox, env: { SANDBOX_WORKERS: '2', SANDBOX_RATE_LIMIT: String(limit) }, pin: false, expectListening: 2 })
  try {
    const pids = [server.pid, ...childPids(server.pid)]
    const socketsBefore = pids.map(socketCount)
    const headers = { 'content-type': 'application/json', 'x-forwarded-for': '10.250.250.250' }
    const opened = await fetch(`${server.url}/api/sandbox/session`, { method: 'POST', headers })
    await opened.arrayBuffer()
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!
    const body = JSON.stringify({ trip: { origin_country: 'IN', destination_country: 'FR', start_date: DATES.start, end_date: DATES.end }, travellers: [{ age: 34 }] })
    const statuses = await Promise.all(Array.from({ length: concurrent }, async () => {
      const response = await fetch(`${server.url}/api/sandbox/plans/search`, { method: 'POST', headers: { ...headers, cookie }, body })
      await response.arrayBuffer()
      return response.status
    }))
    const socketsAfter = pids.map(socketCount)
    const admitted = (opened.ok ? 1 : 0) + statuses.filter((status) => status === 200).length
    const exact = {
      limit, concurrent, admitted,
      refused: statuses.filter((status) => status === 429).length,
      other: statuses.filter((status) => status !== 200 && status !== 429).length,
      sockets: socketsAfter.map((after, index) => `+${after - socketsBefore[index]!}`).join(' / '),
    }
    log(`  admitted ${admitted} (session + ${admitted - 1}), refused ${exact.refused}, other ${exact.other}; new sockets per process ${exact.sockets}`)
    return { throughput, exact }
  } finally {
    await server.stop()
  }
}
