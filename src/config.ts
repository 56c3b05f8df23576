/**
 * @module Configuration, read once from the environment at start-up. A bad value stops start-up
 * with one line naming the variable.
 */
import { databaseUrlProblem } from './storage/database-url'
import { isIP } from 'node:net'

export interface Config {
  port: number
  host: string
  dbPath: string
  /** A database server that several instances share (hosted); null: the embedded file at `dbPath`. */
  databaseUrl: string | null
  /** Upper bound on the database file in MiB; 0 for none. Writes past it answer `storage_unavailable`. */
  dbMaxMegabytes: number
  rateLimit: number
  rateWindowSeconds: number
  sessionTtlSeconds: number
  sweepIntervalSeconds: number
  trustProxy: number
  /** Browser origins allowed to call with credentials (CORS); empty: CORS off. */
  corsOrigins: string[]
  /** Processes serving one port and one database file (Bun entry and binary; Linux `SO_REUSEPORT`). */
  workers: number
  /** The insurer UAT gateway; null when `SANDBOX_UAT_URL` is unset (simulation only). */
  uat: UatConfig | null
  /**
   * Where webhooks may deliver: `any` address (a partner's own machine or CI, loopback included) or
   * only `public` ones (hosted). By default `public` with a shared database (a hosted deployment), else `any`.
   */
  webhookTargets: 'any' | 'public'
}

export interface UatConfig {
  url: string
  timeoutMs: number
  retries: number
  breakerFailures: number
  breakerCooldownSeconds: number
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

export function loadConfig(env: Env): Config {
  return {
    port: integer(env, 'PORT', 3000, 0, 65_535),
    host: host(env),
    dbPath: text(env, 'SANDBOX_DB_PATH', 'data/sandbox.db'),
    databaseUrl: databaseUrl(env),
    dbMaxMegabytes: integer(env, 'SANDBOX_DB_MAX_MB', 0, 0, 1_000_000),
    rateLimit: integer(env, 'SANDBOX_RATE_LIMIT', 30, 1, 1_000_000_000),
    rateWindowSeconds: integer(env, 'SANDBOX_RATE_WINDOW_SECONDS', 600, 1, 86_400),
    sessionTtlSeconds: integer(env, 'SANDBOX_SESSION_TTL_SECONDS', 3600, 1, 7 * 86_400),
    sweepIntervalSeconds: integer(env, 'SANDBOX_SWEEP_INTERVAL_SECONDS', 60, 1, 86_400),
    trustProxy: integer(env, 'SANDBOX_TRUST_PROXY', 0, 0, 32),
    corsOrigins: origins(env, 'SANDBOX_CORS_ORIGINS'),
    workers: integer(env, 'SANDBOX_WORKERS', 1, 1, 64),
    uat: uatConfig(env),
    webhookTargets: choice(env, 'SANDBOX_WEBHOOK_TARGETS', ['any', 'public'], databaseUrl(env) ? 'public' : 'any'),
  }
}

function choice<const Value extends string>(env: Env, name: string, values: readonly Value[], fallback: Value): Value {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!values.includes(raw as Value)) throw new ConfigError(`${name} must be one of ${values.join(', ')} (got ${JSON.stringify(raw)})`)
  return raw as Value
}

function databaseUrl(env: Env): string | null {
  const raw = env.SANDBOX_DATABASE_URL
  if (raw === undefined || raw === '') return null
  // The value may hold a password: it is not repeated.
  const problem = databaseUrlProblem(raw)
  if (problem) throw new ConfigError(`SANDBOX_DATABASE_URL ${problem}`)
  return raw
}

function uatConfig(env: Env): UatConfig | null {
  const raw = env.SANDBOX_UAT_URL
  if (raw === undefined || raw === '') return null
  const url = URL.canParse(raw) ? new URL(raw) : null
  if (!url || !['http:', 'https:'].includes(url.protocol)) {
    throw new ConfigError(`SANDBOX_UAT_URL must be an http or https URL (got ${JSON.stringify(raw)})`)
  }
  return {
    url: url.toString().replace(/\/$/, ''),
    timeoutMs: integer(env, 'SANDBOX_UAT_TIMEOUT_MS', 2000, 50, 60_000),
    retries: integer(env, 'SANDBOX_UAT_RETRIES', 2, 0, 5),
    breakerFailures: integer(env, 'SANDBOX_UAT_BREAKER_FAILURES', 5, 1, 1000),
    breakerCooldownSeconds: integer(env, 'SANDBOX_UAT_BREAKER_COOLDOWN_SECONDS', 30, 1, 3600),
  }
}

/** A comma-separated list of exact origins (`https://tool.example`, `http://localhost:5173`). */
function origins(env: Env, name: string): string[] {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return []
  return raw.split(',').map((entry) => entry.trim()).map((origin) => {
    const url = URL.canParse(origin) ? new URL(origin) : null
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin) {
      throw new ConfigError(`${name} must list origins such as https://tool.example or http://localhost:5173, separated by commas (got ${JSON.stringify(origin)})`)
    }
    return origin
  })
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw)})`)
  }
  return value
}

const LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/

/**
 * An IP address to listen on, or a host name (which must still resolve when listening). A name
 * whose last label is all digits (`999.1.1.1`) is a bad IPv4 address, not a name.
 */
function host(env: Env): string {
  const raw = text(env, 'HOST', '0.0.0.0')
  const labels = raw.split('.')
  const isName = raw.length <= 253 && labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(labels.at(-1)!)
  if (isIP(raw) || isName) return raw
  throw new ConfigError(`HOST must be an IP address or a host name (got ${JSON.stringify(raw)})`)
}

function text(env: Env, name: string, fallback: string): string {
  const raw = env[name]
  if (raw === undefined) return fallback
  if (raw.trim() === '') throw new ConfigError(`${name} must not be empty`)
  return raw
}
