import { defineConfig } from '@playwright/test'
import { HTTP_PORT, ROOT, freshDatabasePath } from './test/http/support/server'
import { selectedTargets, serverCommand, standInPort, targetEnv } from './test/http/support/targets'

// HTTP tests against real server processes on real SQLite files, once per target (Bun source,
// compiled binary, Deno bundle, Node). Each target's shared server trusts one proxy hop so that
// every test can be its own network through X-Forwarded-For; tests that need another
// configuration (short session TTL, restarts) start their own server (support/server.ts).
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
  webServer: [...(targets.includes('uat') ? [standIn] : []), ...targets.map((target, index) => {
    const { command, args } = serverCommand(target, ROOT)
    return {
      command: [command, ...args].join(' '),
      url: `http://127.0.0.1:${portOf(index)}/healthz`,
      reuseExistingServer: false,
      timeout: 30_000,
      env: {
        PORT: String(portOf(index)),
        HOST: '127.0.0.1',
        SANDBOX_DB_PATH: freshDatabasePath(`shared-${target}`),
        SANDBOX_TRUST_PROXY: '1',
        ...targetEnv(target, HTTP_PORT),
      },
    }
  })],
})
