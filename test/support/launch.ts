/**
 * @module Starting a server process and stopping it, for the HTTP suite and the benchmark alike: the
 * command of each runtime, a free port, waiting until the process answers, and its output. It lives
 * in test/support/, the helpers the tests and the benchmark share, which import neither (imports.test.ts).
 * It runs under Node (Playwright) and under Bun (the benchmark), so it uses node:child_process only.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dirname, '../..')

/**
 * How each runtime's server starts, from the repository root (`deno` and `bun` from
 * node_modules/.bin, which `launch` puts first on the PATH), and the build artefact it runs (null:
 * the source).
 */
export const RUNTIMES = {
  bun: { command: 'bun', args: ['src/runtime/bun/server.ts'], artefact: null },
  binary: { command: 'dist/travel-sandbox', args: [], artefact: 'dist/travel-sandbox' },
  deno: {
    command: 'deno',
    args: ['run', '--allow-net', '--allow-env', '--allow-read', '--allow-write', 'dist/travel-sandbox.deno.js'],
    artefact: 'dist/travel-sandbox.deno.js',
  },
  node: { command: 'node', args: ['dist/travel-sandbox.node.js'], artefact: 'dist/travel-sandbox.node.js' },
} as const

export type Runtime = keyof typeof RUNTIMES

/** The command line that starts a runtime's server, run from the repository root. */
export function runtimeCommand(runtime: Runtime): string[] {
  const { command, args, artefact } = RUNTIMES[runtime]
  return [artefact === command ? join(ROOT, command) : command, ...args]
}

/** Whether a runtime's build artefact is there (`npm run build`); the source always is. */
export const isBuilt = (runtime: Runtime) => RUNTIMES[runtime].artefact === null || existsSync(join(ROOT, RUNTIMES[runtime].artefact!))

/** A loopback port nobody listens on right now (the kernel picks it). */
export async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((done, fail) => {
    probe.once('error', fail)
    probe.listen(0, '127.0.0.1', done)
  })
  const { port } = probe.address() as AddressInfo
  await new Promise((done) => probe.close(done))
  return port
}

/** Resolves after `ms` milliseconds (at once for 0 or less). */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

export interface LaunchOptions {
  /** The program and its arguments, run from the repository root. */
  command: string[]
  port: number
  /** On top of this process's environment and of HOST (loopback), PORT and PATH (node_modules/.bin first). */
  env?: Record<string, string>
  /** The path that answers 2xx once the process is ready. */
  readyPath?: string
  /** Also wait for this many `listening` log lines (one per worker process). */
  listening?: number
  /** Give up, and SIGKILL the process, when it is not ready after this long. */
  timeoutMs?: number
  /** How long to wait between two looks (cold-start measurements look every millisecond). */
  pollMs?: number
  /**
   * Write stdout and stderr to this file instead of keeping them in memory: the benchmark's
   * servers log a line per request, and a pipe read by the benchmark would cost it CPU mid-run.
   */
  logFile?: string
  /** Called with the process as soon as it exists (the benchmark tracks it for its clean-up). */
  onSpawn?: (child: ChildProcess) => void
}

export interface Launched {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string
  pid: number
  process: ChildProcess
  /** Everything the process printed so far (stdout and stderr). */
  output(): string
  /** Only what it printed on stdout (with a log file: the whole file). */
  stdout(): string
  /** Sends the signal (none once the process has ended) and resolves with its exit code once it has ended. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts `command` on `port` and waits until `readyPath` answers (and the `listening` lines are there). */
export async function launch(options: LaunchOptions): Promise<Launched> {
  const { command, port, readyPath = '/healthz', timeoutMs = 15_000, pollMs = 50 } = options
  const log = options.logFile ? openSync(options.logFile, 'w') : 'pipe'
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`, HOST: '127.0.0.1', PORT: String(port), ...options.env },
    stdio: ['ignore', log, log],
  })
  if (typeof log === 'number') closeSync(log)
  options.onSpawn?.(child)
  let spawnError: Error | undefined
  child.once('error', (error) => (spawnError = error))
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  let output = ''
  let stdout = ''
  child.stdout?.on('data', (chunk) => {
    stdout += chunk
    output += chunk
  })
  child.stderr?.on('data', (chunk) => (output += chunk))
  const printed = () => (options.logFile ? readFileSync(options.logFile, 'utf8') : output)
  const server: Launched = {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    process: child,
    output: printed,
    stdout: () => (options.logFile ? printed() : stdout),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
  const name = command.join(' ')
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (spawnError) throw new Error(`${name} did not start: ${spawnError.message}`)
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited during start-up (${child.exitCode ?? child.signalCode}):\n${printed().slice(-2000)}`)
    if (await isReady(server, readyPath, options.listening ?? 0)) return server
    if (Date.now() > deadline) {
      await server.stop('SIGKILL')
      throw new Error(`${name} was not ready within ${timeoutMs} ms:\n${printed().slice(-2000)}`)
    }
    await sleep(pollMs)
  }
}

async function isReady(server: Launched, readyPath: string, listening: number): Promise<boolean> {
  try {
    const response = await fetch(`${server.url}${readyPath}`)
    await response.arrayBuffer()
    return (
      response.ok &&
      server
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"msg":"listening"')).length >= listening
    )
  } catch {
    return false // not listening yet
  }
}
