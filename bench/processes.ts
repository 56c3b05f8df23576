/**
 * @module The benchmark's processes: every one started here is tracked and stopped on the way out (on
 * an error and on Ctrl-C too), servers start (test/support/launch.ts) on a free loopback port with a fresh database, and
 * /proc gives their CPU time, peak RSS and sockets. `openHarness()` makes the scratch folder.
 */
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { ALLOCATOR_OPTIONS } from '../src/runtime/bun/allocator-options'
import { freePort, launch, sleep } from '../test/support/launch'

export { ROOT } from '../test/support/launch'
export const BUN = process.execPath
export const CORES = navigator.hardwareConcurrency
const TASKSET = Bun.which('taskset')
/** Server on core 1, load generator on core 0, where taskset and two cores exist. */
export const PIN = TASKSET !== null && CORES >= 2

/**
 * The allocator's options the hosted sandbox gives itself, for every server: the ladder's rungs, the
 * floors and a checkout compared with --src too, so that rows differ by their code alone. A value in
 * the benchmark's own environment wins (`MIMALLOC_PURGE_HOLES=1` measures without).
 */
const allocatorOptions = () => Object.fromEntries(Object.entries(ALLOCATOR_OPTIONS).map(([name, value]) => [name, process.env[name] ?? value]))

/** `command` run on one core, when pinning is possible and wanted. */
export const pinned = (core: number, command: string[], pin = true) => (PIN && pin ? [TASKSET!, '-c', String(core), ...command] : command)

export interface Server {
  pid: number
  url: string
  logFile: string
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
  /** Every process started here that has not ended yet. */
  const live = new Set<number>()
  const work = mkdtempSync(join(tmpdir(), 'sandbox-bench-'))
  /** Directories made elsewhere (tmpfs), removed with `work`, also when the run is interrupted. */
  const scratch: string[] = []
  let cleanedUp = false

  function cleanup() {
    if (cleanedUp) return
    cleanedUp = true
    for (const pid of live) {
      for (const child of childPids(pid)) killQuietly(child, 'SIGKILL')
      killQuietly(pid, 'SIGKILL')
    }
    for (const dir of [work, ...scratch]) rmSync(dir, { recursive: true, force: true })
  }

  /** A fresh directory under `base` (say /dev/shm) that cleanup removes. */
  function scratchDir(base: string): string {
    const dir = mkdtempSync(join(base, 'sandbox-bench-'))
    scratch.push(dir)
    return dir
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      console.error(`\nbench: ${signal}, stopping everything it started`)
      cleanup()
      process.exit(130)
    })
  }
  process.on('exit', cleanup)

  /** A load generator (Bun.spawn: its CPU time is read from resourceUsage). */
  function spawn(command: string[], options: Parameters<typeof Bun.spawn>[1]): Subprocess {
    const proc = Bun.spawn(command, options)
    live.add(proc.pid)
    void proc.exited.then(() => live.delete(proc.pid))
    return proc
  }

  /**
   * Starts a server (test/support/launch.ts) on a free loopback port with a fresh database, its output in a
   * log file, and waits for `GET /healthz`.
   */
  async function startServer(options: ServerOptions): Promise<Server> {
    const logFile = join(work, `${options.name}.log`)
    const server = await launch({
      command: pinned(1, options.command, options.pin ?? true),
      port: await freePort(),
      env: {
        SANDBOX_DB_PATH: join(work, `${options.name}.db`),
        SANDBOX_TRUST_PROXY: '1',
        // The production window (10 minutes) with a limit no run reaches: every request is still checked
        // and counted, and each counter holds every hit of the run.
        SANDBOX_RATE_LIMIT: '1000000000',
        ...allocatorOptions(),
        ...options.env,
      },
      listening: options.expectListening,
      timeoutMs: 30_000,
      pollMs: 20,
      logFile,
      onSpawn: (child) => {
        live.add(child.pid!)
        child.once('exit', () => live.delete(child.pid!))
      },
    })
    const { pid } = server
    return {
      pid,
      url: server.url,
      logFile,
      peakRssMb: () => (procStatusKb(pid, 'VmHWM') * 1024) / 1e6,
      cpu: () => [pid, ...childPids(pid)].reduce((sum, one) => sum + cpuSeconds(one), 0),
      async stop() {
        const children = childPids(pid)
        const exited = await Promise.race([server.stop('SIGTERM').then(() => true), sleep(5000).then(() => false)])
        if (!exited) await server.stop('SIGKILL')
        for (const child of children) killQuietly(child, 'SIGKILL')
      },
    }
  }

  return { work, scratchDir, spawn, startServer, cleanup }
}

export function killQuietly(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

/** Direct children of a process (a shell's, say), from /proc. */
export const childPids = (pid: number): number[] =>
  fromProc(
    () =>
      readdirSync(`/proc/${pid}/task`).flatMap((task) =>
        readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
      ),
    [],
  )

/** What `read` makes of /proc, or `otherwise` once the process (or the file) is gone. */
function fromProc<T>(read: () => T, otherwise: T): T {
  try {
    return read()
  } catch {
    return otherwise
  }
}

/** A field of /proc/<pid>/status, in kB (VmRSS, VmHWM). */
export const procStatusKb = (pid: number, field: 'VmRSS' | 'VmHWM'): number =>
  fromProc(() => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN), NaN)

/** CPU seconds (user + system) a process has used so far. */
export const cpuSeconds = (pid: number): number =>
  fromProc(() => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  }, NaN)

/** Bytes a process has written so far, counted as its threads dirty them (/proc/<pid>/io, `write_bytes`). */
export const writtenBytes = (pid: number): number =>
  fromProc(() => Number(/\nwrite_bytes: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN), NaN)

export const socketCount = (pid: number): number =>
  fromProc(() => readdirSync(`/proc/${pid}/fd`).filter((fd) => fromProc(() => readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:'), false)).length, NaN)

/**
 * The machine's CPU time so far, all cores, in ticks (`/proc/stat`): in all, and stolen by the
 * hypervisor (on a VM, time its neighbours took from ours).
 */
export const machineTicks = (): { total: number; stolen: number } =>
  fromProc(
    () => {
      // user nice system idle iowait irq softirq steal (guest time is already in user)
      const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
      return { total: fields.reduce((sum, ticks) => sum + ticks, 0), stolen: fields[7] ?? Number.NaN }
    },
    { total: Number.NaN, stolen: Number.NaN },
  )

/** The load average, printed with every figure: the machine is shared. */
export const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
