/**
 * @module The benchmark's processes: every one started here is tracked and stopped on the way out (on
 * an error and on Ctrl-C too), servers start on a free loopback port with a fresh database, and
 * /proc gives their CPU time, peak RSS and sockets. `openHarness()` makes the scratch folder.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { freePort, sleep } from '../test/support/wait'

export const ROOT = resolve(import.meta.dir, '..')
export const BUN = process.execPath
export const CORES = navigator.hardwareConcurrency
const TASKSET = Bun.which('taskset')
/** Server on core 1, load generator on core 0, where taskset and two cores exist. */
export const PIN = TASKSET !== null && CORES >= 2

/** `command` run on one core, when pinning is possible and wanted. */
export const pinned = (core: number, command: string[], pin = true) => (PIN && pin ? [TASKSET!, '-c', String(core), ...command] : command)

export interface Server {
  pid: number
  url: string
  logFile: string
  proc: Subprocess
  peakRssMb(): number
  /** CPU seconds used so far by the server and its worker processes. */
  cpu(): number
  stop(): Promise<void>
}

export interface ServerOptions {
  name: string
  command: string[]
  env?: Record<string, string>
  pin?: boolean
  /** Wait for this many `listening` log lines (one per worker process). */
  expectListening?: number
}

export type Harness = ReturnType<typeof openHarness>

export function openHarness() {
  const live = new Set<Subprocess>()
  const work = mkdtempSync(join(tmpdir(), 'sandbox-bench-'))
  let cleanedUp = false

  function cleanup() {
    if (cleanedUp) return
    cleanedUp = true
    for (const proc of live) {
      for (const child of childPids(proc.pid)) killQuietly(child, 'SIGKILL')
      killQuietly(proc.pid, 'SIGKILL')
    }
    rmSync(work, { recursive: true, force: true })
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      console.error(`\nbench: ${signal}, stopping everything it started`)
      cleanup()
      process.exit(130)
    })
  }
  process.on('exit', cleanup)

  function spawn(command: string[], options: Parameters<typeof Bun.spawn>[1]): Subprocess {
    const proc = Bun.spawn(command, options)
    live.add(proc)
    void proc.exited.then(() => live.delete(proc))
    return proc
  }

  /** Starts a server on a free loopback port with a fresh database, and waits for `GET /healthz`. */
  async function startServer(options: ServerOptions): Promise<Server> {
    const port = await freePort()
    const logFile = join(work, `${options.name}.log`)
    const fd = openSync(logFile, 'w')
    const env = {
      ...process.env,
      PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`,
      PORT: String(port),
      HOST: '127.0.0.1',
      SANDBOX_DB_PATH: join(work, `${options.name}.db`),
      SANDBOX_TRUST_PROXY: '1',
      // The production window (10 minutes) with a limit no run reaches: every request is still checked
      // and counted, and each counter holds every hit of the run.
      SANDBOX_RATE_LIMIT: '1000000000',
      ...options.env,
    }
    const proc = spawn(pinned(1, options.command, options.pin ?? true), { cwd: ROOT, env, stdin: 'ignore', stdout: fd, stderr: fd })
    closeSync(fd)
    const url = `http://127.0.0.1:${port}/`
    await answering(proc, url, logFile, options)
    return {
      pid: proc.pid,
      url,
      logFile,
      proc,
      peakRssMb: () => (procStatusKb(proc.pid, 'VmHWM') * 1024) / 1e6,
      cpu: () => [proc.pid, ...childPids(proc.pid)].reduce((sum, pid) => sum + cpuSeconds(pid), 0),
      async stop() {
        const children = childPids(proc.pid)
        proc.kill('SIGTERM')
        const exited = await Promise.race([proc.exited.then(() => true), sleep(5000).then(() => false)])
        if (!exited) proc.kill('SIGKILL')
        await proc.exited
        for (const child of children) killQuietly(child, 'SIGKILL')
      },
    }
  }

  return { work, spawn, startServer, cleanup }
}

async function answering(proc: Subprocess, url: string, logFile: string, options: ServerOptions): Promise<void> {
  const started = performance.now()
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`${options.name} exited during start-up:\n${readFileSync(logFile, 'utf8').slice(-2000)}`)
    }
    if (performance.now() - started > 30_000) throw new Error(`${options.name} did not answer /healthz within 30 s`)
    try {
      const response = await fetch(`${url}healthz`)
      await response.arrayBuffer()
      const listening = readFileSync(logFile, 'utf8').split('\n').filter((line) => line.includes('"msg":"listening"')).length
      if (response.ok && listening >= (options.expectListening ?? 0)) return
    } catch {
      // not yet
    }
    await sleep(20)
  }
}

export function killQuietly(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

/** Direct children of a process (the Bun entry's extra workers), from /proc. */
export function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number))
  } catch {
    return []
  }
}

function procStatusKb(pid: number, field: string): number {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)
  } catch {
    return NaN
  }
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}

export function socketCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')
      } catch {
        return false
      }
    }).length
  } catch {
    return NaN
  }
}

/** The load average, printed with every figure: the machine is shared. */
export const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
