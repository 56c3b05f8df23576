/**
 * @module What every runtime's entry shares once it has a driver: configuration, app, sweeps and
 * graceful shutdown. The entry supplies how to open SQLite and how to serve.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { createApp, type AppOptions } from './app'
import { ConfigError, loadConfig, type Config } from './config'
import type { SqliteDriver } from './storage/driver'
import { createServices, type Services } from './services'
import { version } from '../package.json'

const HELP = `travel-sandbox ${version}: the travel protection sandbox (sessions, plan search, policy issue and modify).

Usage: travel-sandbox [--help | --version]

Configuration comes from the environment only:
  PORT, HOST                        where to listen (3000, 0.0.0.0)
  SANDBOX_DB_PATH                   SQLite file (data/sandbox.db; :memory: for a throwaway store)
  SANDBOX_DB_MAX_MB                 cap on the database size in MiB (0: none)
  SANDBOX_RATE_LIMIT                requests per window, per session and per network (30)
  SANDBOX_RATE_WINDOW_SECONDS       rolling window (600)
  SANDBOX_SESSION_TTL_SECONDS       session lifetime (3600)
  SANDBOX_SWEEP_INTERVAL_SECONDS    expiry sweep interval (60)
  SANDBOX_TRUST_PROXY               trusted proxy hops for X-Forwarded-For (0)
  SANDBOX_WORKERS                   processes sharing the port and the database (1; Bun, Linux)
  SANDBOX_UAT_URL                   insurer UAT to reach in uat_gateway mode (unset: simulation only)
  SANDBOX_UAT_TIMEOUT_MS, SANDBOX_UAT_RETRIES, SANDBOX_UAT_BREAKER_FAILURES,
  SANDBOX_UAT_BREAKER_COOLDOWN_SECONDS   gateway call timeout (2000), retries (2), breaker (5, 30)
`

/** `--help` and `--version` print and exit; any other argument is refused. */
function handleArguments(args: string[]): void {
  if (args.includes('--version')) {
    console.log(version)
    process.exit(0)
  }
  if (args.length > 0) {
    const unknown = args.find((arg) => arg !== '--help')
    if (unknown) console.error(`travel-sandbox: unknown argument ${unknown}`)
    console.log(HELP)
    process.exit(unknown ? 2 : 0)
  }
}

export type SandboxApp = ReturnType<typeof createApp>

export interface Runtime extends AppOptions {
  /** False in the extra processes of a multi-process server: one process sweeps for all. */
  sweeps?: boolean
  /** Runs after the last request and before the WAL is checkpointed and the database closed. */
  beforeFinalCheckpoint?: () => Promise<void>
  openDatabase(path: string): SqliteDriver
  /** Starts serving; `stop` stops accepting and resolves once in-flight requests are done. */
  serve(app: SandboxApp, config: Config, services: Services): { url: string; stop(): Promise<void> }
}

export function configOrExit(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(`travel-sandbox: invalid configuration: ${error.message}`)
    process.exit(2)
  }
}

const SHUTDOWN_GRACE_MS = 8_000

const logLine = (fields: Record<string, unknown>) => JSON.stringify({ time: new Date().toISOString(), ...fields })

export function start(runtime: Runtime, env: Record<string, string | undefined>, args: string[]): void {
  handleArguments(args)
  const config = configOrExit(env)
  if (config.dbPath !== ':memory:') mkdirSync(dirname(config.dbPath), { recursive: true })
  const db = runtime.openDatabase(config.dbPath)
  const services = createServices({ db, config })
  const app = createApp(services, runtime)
  const server = runtime.serve(app, config, services)
  console.log(logLine({ level: 'info', msg: 'listening', url: server.url, db: config.dbPath }))

  let sweeping = false
  const sweepTimer = setInterval(async () => {
    if (sweeping || runtime.sweeps === false) return
    sweeping = true
    try {
      const started = performance.now()
      const swept = await services.sweeper.sweep(services.clock())
      if (swept.sessionsPurged + swept.sessionsForgotten + swept.rateHitsDeleted > 0) {
        console.log(logLine({ level: 'info', msg: 'sweep', duration_ms: Math.round(performance.now() - started), ...swept }))
      }
    } catch (error) {
      console.error(logLine({ level: 'error', msg: 'sweep failed', error: String(error) }))
    } finally {
      sweeping = false
    }
  }, config.sweepIntervalSeconds * 1000)

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    clearInterval(sweepTimer)
    // In-flight requests finish; a client stuck sending its request does not hold the shutdown past
    // the grace period.
    const graceOver = new Promise<'grace over'>((resolve) => setTimeout(() => resolve('grace over'), SHUTDOWN_GRACE_MS).unref?.())
    if ((await Promise.race([server.stop(), graceOver])) === 'grace over') {
      console.error(logLine({ level: 'warn', msg: 'shutdown grace period over; closing with requests still open' }))
    }
    await runtime.beforeFinalCheckpoint?.()
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    db.close()
    console.log(logLine({ level: 'info', msg: 'stopped', signal }))
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}
