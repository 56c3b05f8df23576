/**
 * @module What every runtime's entry shares once it has a driver: configuration, app, sweeps and
 * graceful shutdown. The entry supplies how to open SQLite and how to serve.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { createApp, type AppOptions } from './app'
import { ConfigError, loadConfig, type Config } from './config'
import type { SqliteDriver } from './storage/driver'
import { createServices, type Services } from './services'

export type SandboxApp = ReturnType<typeof createApp>

export interface Runtime extends AppOptions {
  openDatabase(path: string): SqliteDriver
  /** Starts serving; `stop` stops accepting and resolves once in-flight requests are done. */
  serve(app: SandboxApp, config: Config, services: Services): { url: string; stop(): Promise<void> }
}

export function configOrExit(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(`travel-sandbox: invalid configuration: ${error.message}`)
    process.exit(2)
  }
}

const logLine = (fields: Record<string, unknown>) => JSON.stringify({ time: new Date().toISOString(), ...fields })

export function start(runtime: Runtime, env: Record<string, string | undefined>): void {
  const config = configOrExit(env)
  if (config.dbPath !== ':memory:') mkdirSync(dirname(config.dbPath), { recursive: true })
  const db = runtime.openDatabase(config.dbPath)
  const services = createServices({ db, config })
  const app = createApp(services, runtime)
  const server = runtime.serve(app, config, services)
  console.log(logLine({ level: 'info', msg: 'listening', url: server.url, db: config.dbPath }))

  let sweeping = false
  const sweepTimer = setInterval(async () => {
    if (sweeping) return
    sweeping = true
    try {
      await services.sweeper.sweep(services.clock())
    } catch (error) {
      console.error(logLine({ level: 'error', msg: 'sweep failed', error: String(error) }))
    } finally {
      sweeping = false
    }
  }, config.sweepIntervalSeconds * 1000)

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    clearInterval(sweepTimer)
    await server.stop()
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    db.close()
    console.log(logLine({ level: 'info', msg: 'stopped', signal }))
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}
