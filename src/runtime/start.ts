/**
 * @module What every runtime's entry shares: configuration, storage, app, sweeps and graceful
 * shutdown. The entry supplies how to open the embedded database on its runtime, and how to serve.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { isIP } from 'node:net'
import { dirname, resolve } from 'node:path'
import { createApp, type RuntimeDescription } from '../app'
import { startDeliveries } from '../modules/events/delivery'
import { startCoverage } from '../modules/policies/coverage'
import { createLog } from '../log'
import { startStallTrace } from '../stall-trace'
import { ConfigError, FLAGS, loadConfig, settingsHelp, withFlags, type Config } from '../config'
import { FileInUse, describeStorage, openStorage, type OpenEmbedded, type Storage } from '../storage'
import { createServices } from '../modules/services'
import { DOCS_PATH } from '../http/paths'
import { spokenDuration } from '../domain/rate-window'
import { version } from '../../package.json'

const HELP = `travel-sandbox ${version}: the travel protection sandbox (sessions, plan search, policy issue, modify and cancel, events).

Usage: travel-sandbox [--local] [--help | --version]

  --local    your own machine or CI: the fair-use limit lifted, loopback (SANDBOX_PROFILE=local)

Configuration comes from the environment (default in brackets):
${settingsHelp()}
`

/** `--help` and `--version` print and exit; a flag (`--local`) is configuration; any other argument is refused. */
function handleArguments(args: string[]): void {
  if (args.includes('--version')) {
    console.log(version)
    process.exit(0)
  }
  const others = args.filter((arg) => !Object.hasOwn(FLAGS, arg))
  if (others.length > 0) {
    const unknown = others.find((arg) => arg !== '--help')
    if (unknown) console.error(`travel-sandbox: unknown argument ${unknown}`)
    console.log(HELP)
    process.exit(unknown ? 2 : 0)
  }
}

export type SandboxApp = ReturnType<typeof createApp>

export interface Runtime extends RuntimeDescription {
  /** Opens a file of the embedded database on this runtime. */
  openEmbedded: OpenEmbedded
  /** Starts serving; `stop` stops accepting and resolves once in-flight requests are done. */
  serve(app: SandboxApp, config: Config): { url: string; stop(): Promise<void> }
}

export function configOrExit(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`travel-sandbox: invalid configuration: ${error.message}\n`)
    process.exit(2)
  }
}

/**
 * Start-up failed for a reason the operator can fix: one line naming the variable, no stack. Plain
 * bytes, not `console.error`, which Bun colours when FORCE_COLOR is set.
 */
export function cannotStart(message: string): never {
  process.stderr.write(`travel-sandbox: cannot start: ${message}\n`)
  process.exit(1)
}

/** An error's code or first line: what an operator needs, without a stack. */
const reason = (error: unknown) => (error as NodeJS.ErrnoException)?.code ?? String((error as Error)?.message ?? error).split('\n')[0]

/** Creates each missing folder in turn (Node's recursive mkdir spins forever under `/proc`). */
function createFolders(folder: string): void {
  const missing: string[] = []
  for (let at = resolve(folder); !existsSync(at); at = dirname(at)) missing.unshift(at)
  for (const at of missing) mkdirSync(at)
}

/** Where webhooks go, as the start-up line says it: and how to change it. */
const webhookTargets = (config: Config) =>
  config.webhookTargets === 'any'
    ? 'any address, this machine included (SANDBOX_WEBHOOK_TARGETS=public for public ones only)'
    : 'public addresses only (SANDBOX_WEBHOOK_TARGETS=any to deliver to this machine too)'

/** The defaults in force and the fair-use limit, as the start-up line says them: and how to lift a hosted default. */
function profile(config: Config): string {
  const limit = `${config.profile} (fair-use limit: ${config.rateLimit} requests per ${spokenDuration(config.rateWindowSeconds)})`
  return config.rateLimitByDefault ? `${limit}; --local or SANDBOX_PROFILE=local lifts it on your own machine or CI` : limit
}

/** Message for a failure to listen; also used by entries whose server reports it later (Node). */
export const listenFailure = (config: Config, error: unknown) => `cannot listen on ${config.host}:${config.port} (HOST, PORT): ${reason(error)}`

function serveOrExit<T>(serve: () => T, config: Config): T {
  try {
    return serve()
  } catch (error) {
    cannotStart(listenFailure(config, error))
  }
}

/**
 * The address a person can open: `localhost` for a server bound to every interface (the default),
 * whose own URL (`http://0.0.0.0:3000/`) is not one a browser can open everywhere.
 */
function openableAddress(config: Config, served: string): string {
  const port = /:(\d+)\/?$/.exec(served)?.[1] ?? String(config.port)
  const host = ['0.0.0.0', '::'].includes(config.host) ? 'localhost' : isIP(config.host) === 6 ? `[${config.host}]` : config.host
  return `http://${host}:${port}`
}

const SHUTDOWN_GRACE_MS = 8_000

const log = createLog()
const logError = createLog((line) => console.error(line))

/** The storage the configuration names; one that cannot be opened stops start-up with one line. */
async function storageOrExit(config: Config, runtime: Runtime): Promise<Storage> {
  if (config.databaseUrl) {
    try {
      return await openStorage(config, runtime.openEmbedded)
    } catch (error) {
      cannotStart(`SANDBOX_DATABASE_URL: cannot open the database ${describeStorage(config)} (${reason(error)})`)
    }
  }
  const path = config.dbPath
  if (path !== ':memory:') {
    try {
      if (existsSync(path) && statSync(path).isDirectory()) cannotStart(`SANDBOX_DB_PATH names a directory, not a database file (${path})`)
      createFolders(dirname(path))
    } catch (error) {
      cannotStart(`SANDBOX_DB_PATH: cannot create the folder ${dirname(path)} (${reason(error)})`)
    }
  }
  try {
    return await openStorage(config, runtime.openEmbedded)
  } catch (error) {
    if (error instanceof FileInUse) {
      cannotStart(
        `SANDBOX_DB_PATH: ${path} is in use by another process; an embedded file serves one process (several share a PostgreSQL database: SANDBOX_DATABASE_URL)`,
      )
    }
    cannotStart(`SANDBOX_DB_PATH: cannot open ${path} as a database file (${reason(error)})`)
  }
}

export async function start(runtime: Runtime, env: Record<string, string | undefined>, args: string[]): Promise<void> {
  handleArguments(args)
  const config = configOrExit(withFlags(env, args))
  const stopStallTrace = config.stallTrace ? startStallTrace(config.stallTrace) : () => {}
  const storage = await storageOrExit(config, runtime)
  const services = createServices({ storage, config })
  const app = createApp(services, runtime)
  const server = serveOrExit(() => runtime.serve(app, config), config)
  const address = openableAddress(config, server.url)
  log({
    level: 'info',
    msg: 'listening',
    url: `${address}/`,
    docs: `${address}${DOCS_PATH}`,
    db: describeStorage(config),
    webhooks: webhookTargets(config),
    profile: profile(config),
  })

  let sweeping = false
  const sweepTimer = setInterval(async () => {
    if (sweeping) return
    sweeping = true
    try {
      const started = performance.now()
      const swept = await storage.sweep(services.clock())
      if (swept.sessionsPurged + swept.sessionsForgotten + swept.rateHitsDeleted > 0) {
        log({ level: 'info', msg: 'sweep', duration_ms: Math.round(performance.now() - started), ...swept })
      }
    } catch (error) {
      logError({ level: 'error', msg: 'sweep failed', error: String(error) })
    } finally {
      sweeping = false
    }
  }, config.sweepIntervalSeconds * 1000)

  // Webhook deliveries: rows polled by every process; each attempt is claimed by one of them.
  const deliveries = startDeliveries({ ...services, log: (fields) => logError(fields) })
  // Cover events as wall time brings them due: polled by every process; each policy claimed by one.
  const coverage = startCoverage(services, (fields) => logError(fields as Parameters<typeof logError>[0]))

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    clearInterval(sweepTimer)
    await coverage.stop()
    // Calls out finish and their outcomes are recorded; what is still due waits in the database.
    const deliveriesStopped = deliveries.stop()
    // In-flight requests finish; a client stuck sending its request does not hold the shutdown past
    // the grace period.
    const graceOver = new Promise<'grace over'>((resolve) => setTimeout(() => resolve('grace over'), SHUTDOWN_GRACE_MS).unref?.())
    if ((await Promise.race([server.stop(), graceOver])) === 'grace over') {
      logError({ level: 'warn', msg: 'shutdown grace period over; closing with requests still open' })
    }
    await deliveriesStopped
    await storage.close()
    stopStallTrace()
    log({ level: 'info', msg: 'stopped', signal })
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}
