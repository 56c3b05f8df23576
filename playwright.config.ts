import { defineConfig } from '@playwright/test'
import { HTTP_PORT, freshDatabasePath } from './test/http/support/server'

// HTTP tests against a real server process on a real SQLite file. The shared server trusts one
// proxy hop so that each test can be its own network through X-Forwarded-For; tests that need
// another configuration (short session TTL, restarts) start their own server (support/server.ts).
export default defineConfig({
  testDir: 'test/http',
  testMatch: '**/*.spec.ts',
  fullyParallel: true,
  workers: 2,
  reporter: process.env.CI ? 'list' : 'line',
  timeout: 30_000,
  use: { baseURL: `http://127.0.0.1:${HTTP_PORT}` },
  webServer: {
    command: 'bun src/server.bun.ts',
    url: `http://127.0.0.1:${HTTP_PORT}/healthz`,
    reuseExistingServer: false,
    timeout: 30_000,
    env: {
      PORT: String(HTTP_PORT),
      HOST: '127.0.0.1',
      SANDBOX_DB_PATH: freshDatabasePath('shared'),
      SANDBOX_TRUST_PROXY: '1',
    },
  },
})
