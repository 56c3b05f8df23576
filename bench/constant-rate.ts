/**
 * Open-loop, constant-rate load for bench/run.ts (wrk has no fixed-rate mode). Request i is
 * scheduled at start + i/rate, whatever happened to the earlier ones, and goes out on lane
 * i % lanes. Each lane is one partner (its own session cookie and X-Forwarded-For network) with at
 * most one request in flight, so fetch's pool keeps at most `lanes` keep-alive connections; a request
 * whose lane is still busy waits for it. Latency is measured from the scheduled send time, so that
 * waiting counts (no coordinated omission, as in wrk2).
 *
 *   bun bench/constant-rate.ts --url http://127.0.0.1:3000 --mode search|issue|modify --rate 500 \
 *     [--duration 10] [--warmup 0] [--lanes 8] [--net 200] [--start YYYY-MM-DD --end YYYY-MM-DD --end2 YYYY-MM-DD] [--pid N]
 *
 * Prints one line `BENCH_JSON {...}`: scheduled, completed, non-2xx, p50/p99/max in ms, the
 * achieved rate and, with `--pid` (the server's), the server's CPU while the clock ran (set-up left
 * out); the clock's window, every request of 5 ms or more and every time this client's own loop ran
 * 2 ms or more late (ms since the epoch), for bench/stalls.ts. Lanes do their own set-up (search, issue) before the clock starts;
 * `--warmup S` sends at the same rate for S seconds before it, unmeasured, so that the clock starts
 * on the server's steady state at that rate.
 */
import { connect, type Socket } from 'node:net'
import { parseArgs } from 'node:util'
import { childPids, cpuSeconds } from './processes'

const { values: options } = parseArgs({
  options: {
    url: { type: 'string' },
    mode: { type: 'string', default: 'search' },
    rate: { type: 'string' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '0' },
    lanes: { type: 'string', default: '8' },
    net: { type: 'string', default: '200' },
    start: { type: 'string' },
    end: { type: 'string' },
    end2: { type: 'string' },
    pid: { type: 'string' },
  },
})

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
const target = new URL(options.url!)
const mode = options.mode as 'search' | 'issue' | 'modify'
const rate = Number(options.rate)
const durationMs = Number(options.duration) * 1000
const warmupMs = Number(options.warmup) * 1000
const laneCount = Number(options.lanes)
const net = Number(options.net)
const startDate = options.start ?? day(30)
const endDate = options.end ?? day(40)
const endDate2 = options.end2 ?? day(45)
if (!options.url || !(rate > 0) || !(warmupMs >= 0) || !['search', 'issue', 'modify'].includes(mode)) {
  console.error('usage: bun bench/constant-rate.ts --url URL --mode search|issue|modify --rate N [--duration S] [--warmup S] [--lanes N]')
  process.exit(2)
}

const trip = { origin_country: 'IN', destination_country: 'FR', start_date: startDate, end_date: endDate }
const travellers = [{ age: 34 }, { age: 8 }]
const searchBody = JSON.stringify({ trip, travellers, currency: 'EUR' })

/**
 * Corrections per policy before a lane moves to its next one: every answer and event of a policy
 * carries its whole history, so one policy corrected thousands of times would measure that history.
 */
const MODIFIES_PER_POLICY = 20

interface Lane {
  connection: Connection
  xff: string
  cookie: string | null
  planId: string | null
  /** The lane's policies, issued before the run; `modifies` tells which one is corrected next. */
  policyRefs: string[]
  modifies: number
  extendNext: boolean
  busy: Promise<void>
}

interface Answer {
  status: number
  /** The session cookie the answer sets (`sbx_session=…`), if any. */
  cookie: string | null
  text: string
}

/**
 * A lane's keep-alive connection: each request goes out in one `write`, each answer is read by its
 * Content-Length. Not fetch, whose client has a tail of its own: against the raw Bun.serve at 8,000
 * req/s it saw a p99 of 7–11 ms where this one sees 3–4 ms (bench/findings.md), and these rows are
 * meant to measure the server. The sandbox's JSON answers always carry a Content-Length.
 */
class Connection {
  private readonly socket: Socket
  private buffered: Buffer = Buffer.alloc(0)
  private pending: { resolve(answer: Answer): void; reject(error: Error): void } | null = null

  constructor(url: URL) {
    this.socket = connect(Number(url.port || 80), url.hostname)
    this.socket.setNoDelay(true)
    this.socket.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
      this.answer()
    })
    const fail = (error?: Error) => {
      this.pending?.reject(error ?? new Error('connection closed'))
      this.pending = null
    }
    this.socket.on('error', fail)
    this.socket.on('close', () => fail())
  }

  request(head: string, body: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      if (this.socket.destroyed) return reject(new Error('connection closed'))
      this.pending = { resolve, reject }
      this.socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
    })
  }

  private answer(): void {
    const end = this.buffered.indexOf('\r\n\r\n')
    if (end < 0 || !this.pending) return
    const head = this.buffered.toString('latin1', 0, end)
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)
    if (!length) {
      // Nothing after it can be framed: the lane's later calls fail as non-2xx.
      this.socket.destroy(new Error(`an answer without Content-Length: ${head.slice(0, 200)}`))
      return
    }
    const total = end + 4 + Number(length[1])
    if (this.buffered.length < total) return
    const text = this.buffered.toString('utf8', end + 4, total)
    this.buffered = this.buffered.subarray(total)
    const { resolve } = this.pending
    this.pending = null
    resolve({ status: Number(head.slice(9, 12)), cookie: /\r\nset-cookie: *(sbx_session=[^;\r]*)/i.exec(head)?.[1] ?? null, text })
  }

  close(): void {
    this.socket.destroy()
  }
}

async function call(lane: Lane, path: string, body: string): Promise<{ status: number; text: string }> {
  const head =
    `POST ${path} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\n` +
    `X-Forwarded-For: ${lane.xff}\r\n${lane.cookie ? `Cookie: ${lane.cookie}\r\n` : ''}`
  const answer = await lane.connection.request(head, body)
  if (answer.cookie) lane.cookie = answer.cookie
  return answer
}

/** The measured call of this mode for this lane. */
function measured(lane: Lane): [string, string] {
  if (mode === 'issue') return ['/api/sandbox/policy/new', JSON.stringify({ plan_id: lane.planId, trip, travellers })]
  if (mode === 'modify') {
    const body = lane.extendNext ? { scenario: 'extend_end_date', new_end_date: endDate2 } : { scenario: 'shorten_end_date', new_end_date: endDate }
    const policyRef = lane.policyRefs[Math.floor(lane.modifies / MODIFIES_PER_POLICY) % lane.policyRefs.length]
    return [`/api/sandbox/policy/${policyRef}/modify`, JSON.stringify(body)]
  }
  return ['/api/sandbox/plans/search', searchBody]
}

async function prepare(lane: Lane): Promise<void> {
  if (mode === 'search') return
  const search = await call(lane, '/api/sandbox/plans/search', searchBody)
  lane.planId = /"plan_id":"([^"]+)"/.exec(search.text)?.[1] ?? null
  if (search.status !== 200 || !lane.planId) throw new Error(`set-up search failed: ${search.status} ${search.text.slice(0, 200)}`)
  if (mode === 'issue') return
  const policies = Math.ceil((rate * (warmupMs + durationMs)) / 1000 / laneCount / MODIFIES_PER_POLICY) + 1
  for (let index = 0; index < policies; index++) {
    const issue = await call(lane, '/api/sandbox/policy/new', JSON.stringify({ plan_id: lane.planId, trip, travellers }))
    const policyRef = /"policy_ref":"([^"]+)"/.exec(issue.text)?.[1]
    if (issue.status !== 200 || !policyRef) throw new Error(`set-up issue failed: ${issue.status} ${issue.text.slice(0, 200)}`)
    lane.policyRefs.push(policyRef)
  }
}

/** After a correction: the next one undoes it, on the same policy until it has had its share. */
function corrected(lane: Lane): void {
  lane.extendNext = !lane.extendNext
  lane.modifies++
}

const lanes: Lane[] = Array.from({ length: laneCount }, (_, index) => ({
  connection: new Connection(target),
  xff: `10.${net}.${Math.floor(index / 250)}.${(index % 250) + 1}`,
  cookie: null,
  planId: null,
  policyRefs: [],
  modifies: 0,
  extendNext: true,
  busy: Promise.resolve(),
}))
await Promise.all(lanes.map(prepare))
// a few unmeasured calls per lane, so the first measured ones do not pay for connection set-up
for (let round = 0; round < 3; round++) {
  await Promise.all(
    lanes.map(async (lane) => {
      const [path, body] = measured(lane)
      const { status } = await call(lane, path, body)
      if (status >= 200 && status < 300 && mode === 'modify') corrected(lane)
    }),
  )
}

const latencies: number[] = []
/** Requests of `SLOW_MS` or more: when each was scheduled (ms since the epoch) and how long it took, for the stall attribution (bench/stalls.ts). */
const SLOW_MS = 5
const slow: [number, number][] = []
/**
 * When this client's own loop ran late (its dispatcher woke 2 ms or more after a request was due):
 * began at, lasted (ms; since the epoch). Requests it held back are the client's doing, not the
 * server's; bench/stalls.ts puts them down to it.
 */
const CLIENT_STALL_MS = 2
const clientStalls: [number, number][] = []
let non2xx = 0
let firstBad = ''
let maxLag = 0
const total = Math.floor((rate * durationMs) / 1000)
const serverPid = options.pid === undefined ? null : Number(options.pid)
const serverCpu = () => (serverPid === null ? NaN : [serverPid, ...childPids(serverPid)].reduce((sum, pid) => sum + cpuSeconds(pid), 0))

/** Sends one request on its lane; with `record`, its answer and latency count. */
function send(index: number, scheduledAt: number, record: boolean): void {
  const lane = lanes[index % laneCount]!
  lane.busy = lane.busy.then(async () => {
    const [path, body] = measured(lane)
    let ok = false
    let bad = ''
    try {
      const { status, text } = await call(lane, path, body)
      ok = status >= 200 && status < 300
      if (ok && mode === 'modify') corrected(lane)
      if (!ok) bad = `${status} ${text.slice(0, 200)}`
    } catch (error) {
      bad = String(error)
    }
    if (!record) return
    if (!ok) {
      non2xx++
      firstBad ||= bad
    }
    const latency = performance.now() - scheduledAt
    latencies.push(latency)
    if (latency >= SLOW_MS && slow.length < 10_000) slow.push([Math.round(performance.timeOrigin + scheduledAt), +latency.toFixed(2)])
  })
}

/**
 * Sends `count` requests at the rate, the first now, and resolves once all are answered; returns
 * when it started. The dispatcher wakes about every millisecond and sends everything whose time has come.
 */
async function atRate(count: number, record: boolean): Promise<number> {
  const started = performance.now()
  let next = 0
  await new Promise<void>((finish) => {
    const tick = () => {
      const now = performance.now()
      // The first request due has waited longest: the loop woke that much late.
      const late = now - (started + (next * 1000) / rate)
      if (record) maxLag = Math.max(maxLag, late)
      if (record && late >= CLIENT_STALL_MS && clientStalls.length < 10_000)
        clientStalls.push([Math.round(performance.timeOrigin + now - late), +late.toFixed(2)])
      while (next < count) {
        const scheduledAt = started + (next * 1000) / rate
        if (scheduledAt > now) break
        send(next, scheduledAt, record)
        next++
      }
      if (next < count) setTimeout(tick, Math.max(0, Math.min(1, started + (next * 1000) / rate - performance.now())))
      else finish()
    }
    tick()
  })
  await Promise.all(lanes.map((lane) => lane.busy))
  return started
}

if (warmupMs > 0) await atRate(Math.floor((rate * warmupMs) / 1000), false)
const cpuAtStart = serverCpu()
const started = await atRate(total, true)
const elapsed = performance.now() - started
const cpuUsed = serverCpu() - cpuAtStart
for (const lane of lanes) lane.connection.close()

latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0
console.log(
  `BENCH_JSON ${JSON.stringify({
    mode,
    target_rate: rate,
    scheduled: total,
    completed: latencies.length,
    non2xx,
    first_bad: firstBad,
    achieved_rate: Math.round((latencies.length / elapsed) * 1000),
    p50_ms: +pct(50).toFixed(2),
    p99_ms: +pct(99).toFixed(2),
    max_ms: +(latencies.at(-1) ?? 0).toFixed(2),
    dispatcher_max_lag_ms: +maxLag.toFixed(2),
    lanes: laneCount,
    window: [Math.round(performance.timeOrigin + started), Math.round(performance.timeOrigin + started + elapsed)],
    slow,
    client_stalls: clientStalls,
    ...(serverPid !== null && {
      server_cpu: +(cpuUsed / (elapsed / 1000)).toFixed(3),
      server_cpu_us_per_request: Math.round((cpuUsed / latencies.length) * 1e6),
    }),
  })}`,
)
