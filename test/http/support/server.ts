/**
 * Starting real sandbox servers for the HTTP suite: the shared one (playwright.config.ts) and the
 * ones a test needs with its own configuration or its own restarts.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { serverCommand, type Target } from './targets'

export const ROOT = resolve(import.meta.dirname, '../../..')
export const HTTP_PORT = Number(process.env.SANDBOX_TEST_PORT ?? 3210)
const TMP = join(ROOT, '.tmp', 'http')

/** A database path no earlier run has used (its leftovers removed). */
export function freshDatabasePath(name: string): string {
  mkdirSync(TMP, { recursive: true })
  const path = join(TMP, `${name}.db`)
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
  return path
}

export interface RunningServer {
  url: string
  process: ChildProcess
  /** Sends the signal and resolves with the exit code once the process has ended. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** A port the system has just handed out as free on loopback. */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done))
  const { port } = probe.address() as AddressInfo
  await new Promise((done) => probe.close(done))
  return port
}

/** The target the current Playwright project tests (set per worker by fixtures.ts). */
export function currentTarget(): Target {
  return (process.env.SANDBOX_TARGET as Target | undefined) ?? 'bun'
}

/**
 * Starts the current target's server with extra environment, on its own port; waits until it
 * answers.
 */
export async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const port = await freePort()
  const { command, args } = serverCommand(currentTarget(), ROOT)
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), SANDBOX_TRUST_PROXY: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${output}`)
    try {
      if ((await fetch(`${url}/healthz`)).ok) break
    } catch {
      if (Date.now() > deadline) throw new Error(`server did not start:\n${output}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  return {
    url,
    process: child,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal)
      return exited
    },
  }
}
