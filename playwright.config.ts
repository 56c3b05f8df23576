import { defineConfig } from '@playwright/test'
import { HTTP_PORT, freshDatabasePath } from './test/http/support/server'
import { instancePorts, selectedTargets, serverCommand, standInPort, targetEnv, type Target } from './test/http/support/targets'

// HTTP tests against real server processes on real SQLite files, once per target (Bun source,
// compiled binary, Deno bundle, Node). Each target's shared server trusts one proxy hop so that
// every test can be its own network through X-Forwarded-For; tests that need another
// configuration (short session TTL, restarts) start their own (the privateServer fixture, support/client.ts).
//
// The `pg` target is two Bun instances on one PostgreSQL database, behind a round-robin load
// balancer that is the project's baseURL, so every call of a test alternates between them.
// Playwright starts webServers one after the other, in this order, before any globalSetup, and
// stops them in reverse: PostgreSQL (support/postgres-server.ts), instance A, instance B, the
// balancer.
const targets = selectedTargets()
const portOf = (index: number) => HTTP_PORT + index

/** The stand-in insurer behind the `uat` target. */
const standIn = {
  command: 'bun test/uat-stand-in/server.ts',
  url: `http://127.0.0.1:${standInPort(HTTP_PORT)}/__stats`,
  reuseExistingServer: false,
  timeout: 30_000,
  env: { PORT: String(standInPort(HTTP_PORT)) },
}

export default defineConfig({
  testDir: 'test/http',
  testMatch: '**/*.spec.ts',
  fullyParallel: true,
  workers: 2,
  reporter: process.env.CI ? 'list' : 'line',
  timeout: 30_000,
  projects: targets.map((target, index) => ({
    name: target,
    use: { baseURL: `http://127.0.0.1:${portOf(index)}` },
  })),
  webServer: [
    ...(targets.includes('uat') ? [standIn] : []),
    ...(targets.includes('pg') ? [postgresServer()] : []),
    ...targets.flatMap((target, index) => (target === 'pg' ? pgServers(portOf(index)) : [sandbox(target, portOf(index))])),
  ],
})

/** A target's shared server on `port`; `dbPath` defaults to a fresh file of the target's own. */
function sandbox(target: Target, port: number, dbPath = freshDatabasePath(`shared-${target}`)) {
  return {
    command: serverCommand(target).join(' '),
    url: `http://127.0.0.1:${port}/healthz`,
    reuseExistingServer: false,
    timeout: 30_000,
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      SANDBOX_DB_PATH: dbPath,
      SANDBOX_TRUST_PROXY: '1',
      // Trusting a proxy makes the default public targets; the suite's receivers are on loopback.
      SANDBOX_WEBHOOK_TARGETS: 'any',
      ...targetEnv(target, HTTP_PORT),
    },
  }
}

/**
 * The PostgreSQL server (embedded, or SANDBOX_TEST_DATABASE_URL's) with the `pg` project's shared
 * database made fresh. SIGTERM at the end, so that it stops PostgreSQL before it exits.
 */
function postgresServer() {
  return {
    command: 'bun test/http/support/postgres-server.ts',
    wait: { stdout: /postgres ready/ },
    reuseExistingServer: false,
    timeout: 60_000,
    gracefulShutdown: { signal: 'SIGTERM' as const, timeout: 15_000 },
    env: { SANDBOX_TEST_PORT: String(HTTP_PORT) },
  }
}

/** Two instances on one PostgreSQL database, and the balancer on the project's port. */
function pgServers(port: number) {
  const dbPath = freshDatabasePath('shared-pg')
  const instances = instancePorts(HTTP_PORT).map((instancePort) => sandbox('pg', instancePort, dbPath))
  return [
    ...instances,
    {
      command: 'bun test/http/support/balancer.ts',
      url: `http://127.0.0.1:${port}/healthz`,
      reuseExistingServer: false,
      timeout: 30_000,
      env: {
        PORT: String(port),
        SANDBOX_UPSTREAMS: instancePorts(HTTP_PORT)
          .map((p) => `http://127.0.0.1:${p}`)
          .join(','),
      },
    },
  ]
}
