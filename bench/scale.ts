/**
 * Scale figures for bench/run.ts (also runnable alone: `bun bench/scale.ts [sessions]`):
 *
 * - seeding: N sessions, each with one plan search and one issued policy, written IN-PROCESS through
 *   the project's own code (createServices with a fake clock, then per session what admission and the routes call,
 *   without HTTP: storage.admit creating the session, searchPlans, storage.admit, issuePolicy). Each
 *   session gets its own network key, as if N partners had come by. The fake clock is 2 hours back,
 *   so every session (60 min) and every rate hit (10 min window) has expired by the time the server
 *   opens the file.
 * - RSS: a server started on that file (default sweep interval, so it does not sweep yet) answers a
 *   few requests; its VmRSS and VmHWM, and the file sizes (db, -wal) as it runs.
 * - sweep: a server started on the same file with SANDBOX_SWEEP_INTERVAL_SECONDS=1; its first sweep
 *   finds every session expired. Its `{"msg":"sweep","duration_ms":…}` line gives the duration; a
 *   probe client sends plan searches back to back meanwhile, and the worst latency of a request that
 *   overlapped the sweep is reported.
 * - cold start of the compiled binary (bench/cold-start.ts's coldStart), when it is built.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { createServices } from '../src/modules/services'
import { openEmbedded } from '../src/runtime/bun/sqlite'
import { openStorage } from '../src/storage'
import type { SessionRow } from '../src/storage/storage'
import { mintSession } from '../src/domain/session-token'
import { searchPlans } from '../src/modules/plans/service'
import { issuePolicy } from '../src/modules/policies/issue'
import { coldStart } from './cold-start'
import { ROOT, freePort } from '../test/support/launch'
import { procStatusKb } from './processes'

const DAY_MS = 86_400_000

export interface ServerHandle {
  pid: number
  url: string
  logFile: string
  stop(): Promise<void>
}

/** How bench/run.ts starts a sandbox; scale.ts borrows it so that cleanup stays in one place. */
export type StartSandbox = (options: { name: string; command: string[]; env: Record<string, string>; pin: boolean }) => Promise<ServerHandle>

export interface ScaleResult {
  sessions: number
  seedSeconds: number
  rssMb: number
  hwmMb: number
  dbMb: number
  walMb: number
  sweepMs: number | null
  sweepPurged: number | null
  sweepWorstMs: number | null
  sweepProbeRequests: number
  /** Probe requests that overlapped the sweep, and how many of them took 50 ms or more. */
  sweepOverlapping: number
  sweepOver50: number
  sweepP99Ms: number | null
  sweepProbeNon2xx: number
  probeWorstOverallMs: number | null
  coldStartP50Ms: number | null
  coldStartBestMs: number | null
  coldStartRuns: number
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** Writes `count` expired sessions, each with a search and a policy, into a new file at `path`. */
export async function seed(path: string, count: number, onProgress?: (done: number) => void): Promise<number> {
  const started = performance.now()
  let now = Date.now() - 2 * 60 * 60 * 1000
  const config = loadConfig({ SANDBOX_DB_PATH: path, SANDBOX_RATE_LIMIT: '1000000000' })
  const storage = await openStorage(config, (file) => openEmbedded(file))
  const services = createServices({ storage, config, clock: () => now, log: () => {} })
  const trip = { origin_country: 'IN', destination_country: 'FR', start_date: iso(now + 30 * DAY_MS), end_date: iso(now + 40 * DAY_MS) }
  const travellers = [{ age: 34 }, { age: 8 }]
  for (let index = 0; index < count; index++) {
    now += 1 // distinct times, as real traffic would have
    const network = `n:10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`
    const minted = mintSession(now, config.sessionTtlSeconds)
    const { session } = (await storage.admit({ tokenHash: null, network, now, create: () => minted })) as { session: SessionRow }
    const caller = { session, sessionToken: minted.token, requestId: `req_seed${index}`, idempotencyKey: null, outcome: null }
    const search = await searchPlans(services, caller, { trip, travellers, currency: 'EUR' })
    await storage.admit({ tokenHash: minted.tokenHash, network, now, create: null })
    await issuePolicy(services, caller, { plan_id: search.data.plans[0]!.plan_id, trip, travellers })
    if (onProgress && index % 10_000 === 9_999) onProgress(index + 1)
  }
  await storage.close()
  return (performance.now() - started) / 1000
}

const fileMb = (path: string) => (existsSync(path) ? statSync(path).size / 1_048_576 : 0)

function searchRequest(cookie: string | null, xff: string) {
  const trip = { origin_country: 'IN', destination_country: 'FR', start_date: iso(Date.now() + 30 * DAY_MS), end_date: iso(Date.now() + 40 * DAY_MS) }
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-forwarded-for': xff }
  if (cookie) headers.cookie = cookie
  return { method: 'POST', headers, body: JSON.stringify({ trip, travellers: [{ age: 34 }, { age: 8 }], currency: 'EUR' }) }
}

export async function runScale(options: {
  sessions: number
  startSandbox: StartSandbox
  serverCommand: string[]
  log: (line: string) => void
  /** Where the servers' database goes (a disk folder, as in production). */
  dir: string
  /** Where to seed it first (a tmpfs such as /dev/shm seeds several times faster); copied to `dir`. */
  scratch: string
}): Promise<ScaleResult> {
  const { sessions, startSandbox, serverCommand, log } = options
  const scratch = mkdtempSync(join(options.scratch, 'sandbox-scale-'))
  const dir = mkdtempSync(join(options.dir, 'scale-'))
  try {
    const dbPath = join(dir, 'scale.db')
    const seedPath = join(scratch, 'scale.db')
    log(`seeding ${sessions.toLocaleString('en')} sessions with a search and a policy each (in-process, fake clock 2 h back, in ${options.scratch})…`)
    const seedSeconds = await seed(seedPath, sessions, (done) => log(`  ${done.toLocaleString('en')}`))
    copyFileSync(seedPath, dbPath) // closed cleanly: no -wal left to copy
    rmSync(scratch, { recursive: true, force: true })
    log(`  seeded in ${seedSeconds.toFixed(1)} s; ${fileMb(dbPath).toFixed(1)} MiB`)

    // RSS: a server on that file, a few requests, no sweep yet (default interval 60 s)
    const env = { SANDBOX_DB_PATH: dbPath, SANDBOX_RATE_LIMIT: '1000000000', SANDBOX_TRUST_PROXY: '1' }
    const rssServer = await startSandbox({ name: 'scale-rss', command: serverCommand, env, pin: true })
    let cookie: string | null = null
    for (let index = 0; index < 200; index++) {
      const response: Response = await fetch(`${rssServer.url}/api/sandbox/plans/search`, searchRequest(cookie, '10.250.0.1'))
      cookie = response.headers.get('set-cookie')?.split(';')[0] ?? cookie
      await response.arrayBuffer()
    }
    const rssMb = procStatusKb(rssServer.pid, 'VmRSS') / 1024
    const hwmMb = procStatusKb(rssServer.pid, 'VmHWM') / 1024
    const dbMb = fileMb(dbPath)
    const walMb = fileMb(`${dbPath}-wal`)
    await rssServer.stop()
    log(`  RSS ${rssMb.toFixed(1)} MiB (peak ${hwmMb.toFixed(1)}), db ${dbMb.toFixed(1)} MiB + wal ${walMb.toFixed(1)} MiB`)

    // Sweep: every session in the file has expired; the first sweep runs 1 s after start.
    const sweepServer = await startSandbox({ name: 'scale-sweep', command: serverCommand, env: { ...env, SANDBOX_SWEEP_INTERVAL_SECONDS: '1' }, pin: true })
    const probes: { sent: number; done: number; ok: boolean }[] = []
    let sweepLine: { time: string; duration_ms: number; sessionsPurged: number } | null = null
    const deadline = Date.now() + 120_000
    cookie = null
    while (Date.now() < deadline) {
      const sent = Date.now()
      const sentPrecise = performance.now()
      let ok = false
      try {
        const response: Response = await fetch(`${sweepServer.url}/api/sandbox/plans/search`, searchRequest(cookie, '10.251.0.1'))
        cookie = response.headers.get('set-cookie')?.split(';')[0] ?? cookie
        await response.arrayBuffer()
        ok = response.ok
      } catch {
        ok = false
      }
      probes.push({ sent, done: sent + (performance.now() - sentPrecise), ok })
      if (!sweepLine && probes.length % 20 === 0) {
        const text = await Bun.file(sweepServer.logFile).text()
        const line = text.split('\n').find((entry) => entry.includes('"msg":"sweep"'))
        if (line) sweepLine = JSON.parse(line)
      }
      // keep probing a little after the sweep's end, then stop
      if (sweepLine && Date.now() > Date.parse(sweepLine.time) + 300) break
    }
    await sweepServer.stop()
    let sweepWorstMs: number | null = null
    let during: typeof probes = []
    let sweepP99Ms: number | null = null
    if (sweepLine) {
      const end = Date.parse(sweepLine.time)
      const begin = end - sweepLine.duration_ms
      during = probes.filter((probe) => probe.done >= begin && probe.sent <= end)
      const times = during.map((probe) => probe.done - probe.sent).sort((a, b) => a - b)
      sweepWorstMs = times.at(-1) ?? 0
      sweepP99Ms = times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] ?? null
      log(
        `  sweep of ${sweepLine.sessionsPurged} sessions: ${sweepLine.duration_ms} ms; ${during.length} probe requests overlapped it, ` +
          `p99 ${sweepP99Ms?.toFixed(1)} ms, worst ${sweepWorstMs.toFixed(1)} ms, ${times.filter((time) => time >= 50).length} took 50 ms or more`,
      )
    } else {
      log('  no sweep line within 120 s')
    }

    // Cold start of the binary, as bench/cold-start.ts measures it
    const binary = join(ROOT, 'dist/travel-sandbox')
    let coldStartP50Ms: number | null = null
    let coldStartBestMs: number | null = null
    const runs = 10
    if (existsSync(binary)) {
      const times: number[] = []
      for (let run = 0; run < runs; run++) times.push(await coldStart([binary], await freePort(), dir))
      times.sort((a, b) => a - b)
      coldStartP50Ms = times[Math.floor(times.length / 2)]!
      coldStartBestMs = times[0]!
      log(`  binary cold start: p50 ${coldStartP50Ms.toFixed(0)} ms, best ${coldStartBestMs.toFixed(0)} ms (${runs} runs)`)
    } else {
      log('  binary not built (npm run build): no cold start')
    }

    return {
      sessions,
      seedSeconds,
      rssMb,
      hwmMb,
      dbMb,
      walMb,
      sweepMs: sweepLine?.duration_ms ?? null,
      sweepPurged: sweepLine?.sessionsPurged ?? null,
      sweepWorstMs,
      sweepProbeRequests: probes.length,
      sweepOverlapping: during.length,
      sweepOver50: during.filter((probe) => probe.done - probe.sent >= 50).length,
      sweepP99Ms,
      sweepProbeNon2xx: probes.filter((probe) => !probe.ok).length,
      probeWorstOverallMs: probes.length ? Math.max(...probes.map((probe) => probe.done - probe.sent)) : null,
      coldStartP50Ms,
      coldStartBestMs,
      coldStartRuns: runs,
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  // Standalone: only the seeding speed and the file size (run.ts does the rest, with its servers).
  const count = Number(process.argv[2] ?? 100_000)
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-seed-'))
  try {
    const seconds = await seed(join(dir, 'scale.db'), count, (done) => console.log(`  ${done}`))
    console.log(`${count} sessions seeded in ${seconds.toFixed(1)} s; db ${fileMb(join(dir, 'scale.db')).toFixed(1)} MiB`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
