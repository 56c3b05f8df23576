/**
 * Starting real sandbox servers for the HTTP suite: the shared one (playwright.config.ts) and the
 * ones a test needs with its own configuration or its own restarts.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { databaseFor, databaseUrl, ensureDatabase } from './postgres'
import { runtimeCommand, serverCommand, targetEnv, type Runtime, type Target } from './targets'

export const ROOT = resolve(import.meta.dirname, '../../..')
export const HTTP_PORT = Number(process.env.SANDBOX_TEST_PORT ?? 3210)
const TMP = join(ROOT, '.tmp', 'http')

/** Paths handed out by freshDatabasePath that no server has started on yet (this process). */
const freshPaths = new Set<string>()

/**
 * A database path no earlier run has used (its leftovers removed). On `pg`, the first server
 * started on it gets a new, empty PostgreSQL database too (postgres.ts).
 */
export function freshDatabasePath(name: string): string {
  mkdirSync(TMP, { recursive: true })
  const path = join(TMP, `${name}.db`)
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
  freshPaths.add(path)
  return path
}

export interface RunningServer {
  url: string
  process: ChildProcess
  /** Everything the process printed so far (stdout and stderr). */
  output(): string
  /** Only what the process printed on stdout so far. */
  stdout(): string
  /** Sends the signal and resolves with the exit code once the process has ended. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
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

/** The target the current Playwright project tests (set per worker by fixtures.ts). */
export function currentTarget(): Target {
  return (process.env.SANDBOX_TARGET as Target | undefined) ?? 'bun'
}

/**
 * The PostgreSQL database that stands for `dbPath` (`pg`): created, and new if the path is fresh.
 * Answers its URL. startServer calls it; call it first to start several servers on a fresh path at
 * once (they would otherwise race to make it new).
 */
export async function preparePostgres(dbPath: string): Promise<string> {
  const database = databaseFor(HTTP_PORT, dbPath)
  await ensureDatabase(HTTP_PORT, database, freshPaths.delete(dbPath))
  return databaseUrl(HTTP_PORT, database)
}

/**
 * Starts the current target's server (or `runtime`'s) with extra environment, on its own port;
 * waits until it answers. On `pg` the server's database is the one that belongs to its
 * `SANDBOX_DB_PATH`: the same path (a restart, a second process) is the same database, a fresh path
 * a new one.
 */
export async function startServer(env: Record<string, string>, runtime?: Runtime): Promise<RunningServer> {
  const port = await testPort()
  const target = currentTarget()
  const { command, args } = runtime ? runtimeCommand(runtime, ROOT) : serverCommand(target, ROOT)
  const storage: Record<string, string> = {}
  if (target === 'pg') {
    const path = env.SANDBOX_DB_PATH ?? freshDatabasePath(`unnamed-${port}-${Date.now()}`)
    Object.assign(storage, { SANDBOX_DB_PATH: path, SANDBOX_DATABASE_URL: await preparePostgres(path) })
  }
  return launch(command, args, port, '/healthz', {
    HOST: '127.0.0.1', PORT: String(port), SANDBOX_TRUST_PROXY: '1', ...targetEnv(target, HTTP_PORT), ...env, ...storage,
  })
}

/** Starts a stand-in insurer UAT (test/uat-stand-in/server.ts) on its own port. */
export async function startStandIn(): Promise<RunningServer> {
  const port = await testPort()
  return launch('bun', ['test/uat-stand-in/server.ts'], port, '/__stats', { PORT: String(port) })
}

async function launch(command: string, args: string[], port: number, readyPath: string, env: Record<string, string>): Promise<RunningServer> {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  let stdout = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} exited early (${child.exitCode}):\n${output}`)
    if (await fetch(`${url}${readyPath}`).then((response) => response.ok, () => false)) break
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`${command} did not start:\n${output}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    url,
    process: child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal)
      return exited
    },
    stdout: () => stdout,
  }
}
