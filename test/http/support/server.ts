/**
 * Starting real sandbox servers for the HTTP suite: the shared one (playwright.config.ts) and the
 * ones a test needs with its own configuration or its own restarts.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'

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

let nextPort = HTTP_PORT + 100 + Number(process.env.TEST_WORKER_INDEX ?? 0) * 20

/** Starts `bun src/server.bun.ts` with extra environment, on its own port; waits until it answers. */
export async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const port = nextPort++
  const child = spawn('bun', ['src/server.bun.ts'], {
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
