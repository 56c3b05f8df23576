/**
 * Starting real sandbox servers for the HTTP suite: the shared one (playwright.config.ts) and the
 * ones a test needs with its own configuration or its own restarts (the `privateServer` fixture,
 * client.ts). The process itself is started by test/support/launch.ts, as the benchmark's are.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { ROOT, launch, runtimeCommand, type Launched, type Runtime } from '../../support/launch'
import { databaseFor, databaseUrl, ensureDatabase } from './postgres'
import { serverCommand, targetEnv, type Target } from './targets'

export { ROOT }
export const HTTP_PORT = Number(process.env.SANDBOX_TEST_PORT ?? 3210)
const TMP = join(ROOT, '.tmp', 'http')
/** A database file and what SQLite keeps beside it, with the lock that keeps it to one process (and that lock's own). */
const SQLITE_FILES = ['', '-wal', '-shm', '.lock', '.lock-wal', '.lock-shm']

export type RunningServer = Launched

/** Paths handed out by freshDatabasePath that no server has started on yet (this process). */
const freshPaths = new Set<string>()

/**
 * A database path no earlier run has used (its leftovers removed). On `pg`, the first server
 * started on it gets a new, empty PostgreSQL database too (postgres.ts).
 */
export function freshDatabasePath(name: string): string {
  mkdirSync(TMP, { recursive: true })
  const path = join(TMP, `${name}.db`)
  removeDatabase(path)
  freshPaths.add(path)
  return path
}

/**
 * A database path of its own for this target and this test. The suite may run twice at once (two
 * checkouts' runs, two port ranges), so the name carries a random part.
 */
export const scratchDatabase = (name: string) => freshDatabasePath(`${name}-${currentTarget()}-${randomBytes(4).toString('hex')}`)

/** Removes a SQLite file with its -wal and -shm (nothing to do on `pg`: the run's end drops its databases). */
export function removeDatabase(path: string): void {
  for (const suffix of SQLITE_FILES) rmSync(path + suffix, { force: true })
}

const PORTS_PER_WORKER = 200
let portsTaken = 0

/**
 * A loopback port for a server a test starts. Not the kernel's pick: a port it hands out, once
 * closed again, can be handed to the other Playwright worker too before our server binds it; then
 * the server that loses exits, and both tests talk to the winner (seen once in CI: a test's calls
 * reached another test's server). Each worker takes ports from a range of its own, below the
 * kernel's ephemeral range (32768 and up) for the default SANDBOX_TEST_PORT, skipping any in use.
 * Concurrent runs on one machine need SANDBOX_TEST_PORT at least 1,000 apart (with 2 workers).
 */
export async function testPort(): Promise<number> {
  const base = HTTP_PORT + 100 + Number(process.env.TEST_PARALLEL_INDEX ?? 0) * PORTS_PER_WORKER
  for (let tries = 0; tries < PORTS_PER_WORKER; tries++) {
    const port = base + (portsTaken++ % PORTS_PER_WORKER)
    if (await canListen(port)) return port
  }
  throw new Error(`no free port in ${base}..${base + PORTS_PER_WORKER - 1}`)
}

function canListen(port: number): Promise<boolean> {
  const probe = createServer()
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

/** The target the current Playwright project tests (set per worker by client.ts). */
export function currentTarget(): Target {
  return (process.env.SANDBOX_TARGET as Target | undefined) ?? 'bun'
}

/** Per database path: its PostgreSQL database being made (once, however many servers start on it at once). */
const prepared = new Map<string, Promise<string>>()

/**
 * The PostgreSQL database that stands for `dbPath` (`pg`): created, and new if the path is fresh.
 * Answers its URL. Servers that start together on one fresh path share the one preparation, so
 * that none drops what another has just made.
 */
export function preparePostgres(dbPath: string): Promise<string> {
  if (!prepared.has(dbPath)) {
    const database = databaseFor(HTTP_PORT, dbPath)
    prepared.set(
      dbPath,
      ensureDatabase(HTTP_PORT, database, freshPaths.delete(dbPath)).then(() => databaseUrl(HTTP_PORT, database)),
    )
  }
  return prepared.get(dbPath)!
}

/**
 * Starts the current target's server (or `runtime`'s) with extra environment (and arguments), on its own port;
 * waits until it answers. On `pg` the server's database is the one that belongs to its
 * `SANDBOX_DB_PATH`: the same path (a restart, a second process) is the same database, a fresh path
 * a new one. Tests get theirs from the `privateServer` fixture, which also stops it.
 */
export async function startServer(env: Record<string, string>, runtime?: Runtime, args: string[] = []): Promise<RunningServer> {
  const port = await testPort()
  const target = currentTarget()
  const storage: Record<string, string> = {}
  if (target === 'pg') {
    const path = env.SANDBOX_DB_PATH ?? freshDatabasePath(`unnamed-${port}-${Date.now()}`)
    Object.assign(storage, { SANDBOX_DB_PATH: path, SANDBOX_DATABASE_URL: await preparePostgres(path) })
  }
  return launch({
    command: [...(runtime ? runtimeCommand(runtime) : serverCommand(target)), ...args],
    port,
    // Trusting a proxy makes the default public targets; the suite's receivers are on loopback.
    env: { SANDBOX_TRUST_PROXY: '1', SANDBOX_WEBHOOK_TARGETS: 'any', ...targetEnv(target, HTTP_PORT), ...env, ...storage },
  })
}

/** Starts a stand-in insurer UAT (test/uat-stand-in/server.ts) on its own port. */
export async function startStandIn(): Promise<RunningServer> {
  return launch({ command: ['bun', 'test/uat-stand-in/server.ts'], port: await testPort(), readyPath: '/__stats' })
}
