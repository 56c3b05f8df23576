/**
 * @module Configuration, read once from the environment at start-up. A bad value stops start-up
 * with one line naming the variable. Every variable is one row of `SETTINGS`: its name, default,
 * rule and help text, from which reading, `--help` (runtime/start.ts) and the docs' tables are made.
 */
import { databaseUrlProblem } from './storage/database-url'
import { isIP } from 'node:net'

export interface Config {
  /**
   * Which defaults apply: `hosted` (a sandbox many partners share: fair-use limits, every interface)
   * or `local` (one's own machine or CI: the limit lifted, loopback). Variables that are set win.
   */
  profile: Profile
  port: number
  host: string
  dbPath: string
  /** A database server that several instances share (hosted); null: the embedded file at `dbPath`. */
  databaseUrl: string | null
  /** Upper bound on the database file in MiB; 0 for none. Writes past it answer `storage_unavailable`. */
  dbMaxMegabytes: number
  rateLimit: number
  /**
   * The limit in force is the hosted default only because nobody chose one (SANDBOX_RATE_LIMIT
   * unset, profile hosted): a refusal then says how to lift it for one's own instance.
   */
  rateLimitByDefault: boolean
  rateWindowSeconds: number
  sessionTtlSeconds: number
  sweepIntervalSeconds: number
  trustProxy: number
  /** Browser origins allowed to call with credentials (CORS); empty: CORS off. */
  corsOrigins: string[]
  /** The insurer UAT gateway; null when `SANDBOX_UAT_URL` is unset (simulation only). */
  uat: UatConfig | null
  /**
   * Where webhooks may deliver: `any` address (a partner's own machine or CI, loopback included) or
   * only `public` ones (hosted). By default `any` only for a sandbox listening on loopback alone, with
   * its own embedded file and no proxy in front: one that others can reach could otherwise be made
   * to call into the network it runs in.
   */
  webhookTargets: 'any' | 'public'
  /** A file the stall trace appends to (stall-trace.ts); null: no trace. */
  stallTrace: string | null
}

export const PROFILES = ['hosted', 'local'] as const
export type Profile = (typeof PROFILES)[number]

/** The fair-use limit's maximum, which `local` takes: no test suite reaches it. */
const LIFTED_RATE_LIMIT = 1_000_000_000

export interface UatConfig {
  url: string
  timeoutMs: number
  retries: number
  breakerFailures: number
  breakerCooldownSeconds: number
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

/** What a variable accepts, as said to a person, and how its text is read. */
interface Rule<Value> {
  accepts: string
  /** An empty value is refused, not read as unset. */
  refusesEmpty?: boolean
  /** The value of `raw`; throws a ConfigError message's tail (after the name) when it is not accepted. */
  read(raw: string): Value
}

interface Setting<Value> {
  name: string
  rule: Rule<Value>
  /** The value when the variable is unset (or empty); a function of the settings read before it where it depends on them. */
  fallback: Value | ((config: Partial<Config>) => Value)
  /** The default as `--help` and the docs say it, where the value alone does not say it. */
  shown?: string
  /** One line for the docs (Markdown) and `--help` (without its backticks). */
  help: string
  /** More for the docs' table (Markdown). */
  more?: string
}

class Refused extends Error {}

const wholeNumber = (min: number, max: number): Rule<number> => ({
  accepts: `a whole number from ${min} to ${max}`,
  read(raw) {
    const value = Number(raw)
    if (!/^\d+$/.test(raw.trim()) || value < min || value > max) throw new Refused(`must be a whole number from ${min} to ${max}`)
    return value
  },
})

const oneOf = <const Value extends string>(values: readonly Value[]): Rule<Value> => ({
  accepts: values.join(' or '),
  read(raw) {
    if (!values.includes(raw as Value)) throw new Refused(`must be one of ${values.join(', ')}`)
    return raw as Value
  },
})

const text: Rule<string> = { accepts: 'any text', refusesEmpty: true, read: (raw) => raw }

const LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/

/**
 * An IP address to listen on, or a host name (which must still resolve when listening). A name
 * whose last label is all digits (`999.1.1.1`) is a bad IPv4 address, not a name.
 */
const hostRule: Rule<string> = {
  accepts: 'an IP address or a host name',
  refusesEmpty: true,
  read(raw) {
    const labels = raw.split('.')
    const isName = raw.length <= 253 && labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(labels.at(-1)!)
    if (isIP(raw) || isName) return raw
    throw new Refused('must be an IP address or a host name')
  },
}

/** A comma-separated list of exact origins (`https://tool.example`, `http://localhost:5173`). */
const originsRule: Rule<string[]> = {
  accepts: 'exact origins, comma-separated',
  read: (raw) =>
    raw.trim() === ''
      ? []
      : raw
          .split(',')
          .map((entry) => entry.trim())
          .map((origin) => {
            const url = URL.canParse(origin) ? new URL(origin) : null
            if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin) {
              throw new Refused(`must list origins such as https://tool.example or http://localhost:5173, separated by commas (got ${JSON.stringify(origin)})`)
            }
            return origin
          }),
}

const httpUrl: Rule<string> = {
  accepts: 'an http or https URL',
  read(raw) {
    const url = URL.canParse(raw) ? new URL(raw) : null
    if (!url || !['http:', 'https:'].includes(url.protocol)) throw new Refused('must be an http or https URL')
    return url.toString().replace(/\/$/, '')
  },
}

/** The value may hold a password: a refusal does not repeat it. */
const databaseUrlRule: Rule<string> = {
  accepts: 'a postgres:// URL',
  read(raw) {
    const problem = databaseUrlProblem(raw)
    if (problem) throw new Refused(problem, { cause: 'secret' })
    return raw
  },
}

/** A host that only this machine can reach: `localhost` (and its subdomains), 127.0.0.0/8, `::1`. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase()
  return name === 'localhost' || name.endsWith('.localhost') || name === '::1' || (isIP(name) === 4 && name.startsWith('127.'))
}

const unset = <Value>(rule: Rule<Value>): Rule<Value | null> => rule

/** Every variable, in the order `--help` and the docs list them. */
export const SETTINGS = {
  profile: {
    name: 'SANDBOX_PROFILE',
    rule: oneOf(PROFILES),
    fallback: 'hosted' as Profile,
    help: 'the defaults: hosted (fair-use limits, every interface) or local (your own machine or CI: limits lifted, loopback); set variables win',
    more: '(`--local` on the command line, or `npm run start:local`, is `local`)',
  },
  port: { name: 'PORT', rule: wholeNumber(0, 65_535), fallback: 3000, help: 'port to listen on' },
  host: {
    name: 'HOST',
    rule: hostRule,
    fallback: (config: Partial<Config>) => (config.profile === 'local' ? '127.0.0.1' : '0.0.0.0'),
    shown: '0.0.0.0; 127.0.0.1 when local',
    help: 'address to listen on',
  },
  dbPath: {
    name: 'SANDBOX_DB_PATH',
    rule: text,
    fallback: 'data/sandbox.db',
    help: 'the embedded SQLite file (its folder is created); `:memory:` for a throwaway store',
  },
  databaseUrl: {
    name: 'SANDBOX_DATABASE_URL',
    rule: unset(databaseUrlRule),
    fallback: null,
    shown: 'unset: the embedded file',
    help: 'postgres://user:password@host:port/database: PostgreSQL, for several instances sharing one database',
    more: '([below](#hosted-several-instances-on-postgresql))',
  },
  dbMaxMegabytes: {
    name: 'SANDBOX_DB_MAX_MB',
    rule: wholeNumber(0, 1_000_000),
    fallback: 0,
    shown: '0: no cap',
    help: 'cap on the embedded file, in MiB',
    more: '; writes past it answer `503 storage_unavailable` until the sweep frees space. Ignored with `SANDBOX_DATABASE_URL` (size a PostgreSQL server by its own means)',
  },
  rateLimit: {
    name: 'SANDBOX_RATE_LIMIT',
    rule: wholeNumber(1, LIFTED_RATE_LIMIT),
    fallback: (config: Partial<Config>) => (config.profile === 'local' ? LIFTED_RATE_LIMIT : 30),
    shown: `30; ${LIFTED_RATE_LIMIT} when local`,
    help: 'requests per window, per session and per network',
  },
  rateWindowSeconds: { name: 'SANDBOX_RATE_WINDOW_SECONDS', rule: wholeNumber(1, 86_400), fallback: 600, help: 'the rolling window, in seconds' },
  sessionTtlSeconds: {
    name: 'SANDBOX_SESSION_TTL_SECONDS',
    rule: wholeNumber(1, 7 * 86_400),
    fallback: 3600,
    help: 'session lifetime, in seconds',
    more: '(a session can also ask for less: `{"lifetime_minutes": 1}`)',
  },
  sweepIntervalSeconds: {
    name: 'SANDBOX_SWEEP_INTERVAL_SECONDS',
    rule: wholeNumber(1, 86_400),
    fallback: 60,
    help: 'how often expired data is deleted, in seconds',
  },
  trustProxy: { name: 'SANDBOX_TRUST_PROXY', rule: wholeNumber(0, 32), fallback: 0, help: 'trusted proxy hops in front of the sandbox (X-Forwarded-For)' },
  corsOrigins: {
    name: 'SANDBOX_CORS_ORIGINS',
    rule: originsRule,
    fallback: [],
    shown: 'unset: no CORS',
    help: 'browser origins allowed to call with credentials, comma-separated',
    more: '(`https://tool.example,http://localhost:5173`); the cookie becomes `SameSite=None; Secure` ([API guide](api.md#browser-tools-on-another-origin-cors))',
  },
  uatUrl: {
    name: 'SANDBOX_UAT_URL',
    rule: unset(httpUrl),
    fallback: null,
    shown: 'unset: simulation only',
    help: 'base URL of an insurer UAT, for uat_gateway mode',
    more: '(speaking the [protocol below](#the-generic-insurer-uat-protocol))',
  },
  uatTimeoutMs: { name: 'SANDBOX_UAT_TIMEOUT_MS', rule: wholeNumber(50, 60_000), fallback: 2000, help: 'timeout of one call to the insurer, in ms' },
  uatRetries: { name: 'SANDBOX_UAT_RETRIES', rule: wholeNumber(0, 5), fallback: 2, help: 'further attempts after a timeout, reset or 5xx' },
  uatBreakerFailures: { name: 'SANDBOX_UAT_BREAKER_FAILURES', rule: wholeNumber(1, 1000), fallback: 5, help: 'failed calls in a row that open the breaker' },
  uatBreakerCooldownSeconds: {
    name: 'SANDBOX_UAT_BREAKER_COOLDOWN_SECONDS',
    rule: wholeNumber(1, 3600),
    fallback: 30,
    help: 'how long the breaker stays open before a trial call, in seconds',
  },
  webhookTargets: {
    name: 'SANDBOX_WEBHOOK_TARGETS',
    rule: oneOf(['any', 'public']),
    fallback: (config: Partial<Config>) => (isLoopbackHost(config.host!) && !config.databaseUrl && config.trustProxy === 0 ? 'any' : 'public'),
    shown: 'any when HOST is loopback, with no SANDBOX_DATABASE_URL and no SANDBOX_TRUST_PROXY; else public',
    help: 'where webhooks may deliver: any address (loopback included) or only public ones',
    more: '([below](#webhooks-on-a-hosted-sandbox))',
  },
  stallTrace: {
    name: 'SANDBOX_STALL_TRACE',
    rule: unset(text),
    fallback: null,
    shown: 'unset: off',
    help: 'a file to append, as JSON lines, every event-loop stall of 2 ms or more and the housekeeping timed beside it; for latency work',
    more: '([below](#where-the-latency-tail-comes-from))',
  },
} satisfies Record<string, Setting<any>>

type Settings = typeof SETTINGS
type ValueOf<Key extends keyof Settings> = Settings[Key] extends Setting<infer Value> ? Value : never

/** Whether a variable is unset: absent, or empty where its rule does not refuse empty values. */
function isUnset(env: Env, key: keyof Settings): boolean {
  const setting: Setting<unknown> = SETTINGS[key]
  const raw = env[setting.name]
  return raw === undefined || (raw === '' && !setting.rule.refusesEmpty)
}

/** A variable's value: its fallback when unset, else what its rule reads. */
function read<Key extends keyof Settings>(env: Env, key: Key, before: Partial<Config>): ValueOf<Key> {
  const setting: Setting<ValueOf<Key>> = SETTINGS[key] as never
  if (isUnset(env, key)) {
    return typeof setting.fallback === 'function' ? (setting.fallback as (config: Partial<Config>) => ValueOf<Key>)(before) : setting.fallback
  }
  const raw = env[setting.name]!
  if (setting.rule.refusesEmpty && raw.trim() === '') throw new ConfigError(`${setting.name} must not be empty`)
  try {
    return setting.rule.read(raw)
  } catch (error) {
    if (!(error instanceof Refused)) throw error
    // A one-line message that names the variable; a secret is not repeated.
    const got = error.cause === 'secret' || error.message.includes('(got ') ? '' : ` (got ${JSON.stringify(raw)})`
    throw new ConfigError(`${setting.name} ${error.message}${got}`)
  }
}

/** Flags of the command line, each standing for a variable's value (and winning over the variable). */
export const FLAGS: Record<string, Env> = { '--local': { SANDBOX_PROFILE: 'local' } }

/** The environment as the command line amends it: `./travel-sandbox --local` needs no variable. */
export function withFlags(env: Env, args: readonly string[]): Env {
  return Object.assign({ ...env }, ...args.map((arg) => (Object.hasOwn(FLAGS, arg) ? FLAGS[arg] : {})))
}

export function loadConfig(env: Env): Config {
  const config: Partial<Config> = {}
  const value = <Key extends keyof Settings>(key: Key) => read(env, key, config)
  // Read first: the defaults of the others depend on it.
  config.profile = value('profile')
  Object.assign(config, {
    port: value('port'),
    host: value('host'),
    dbPath: value('dbPath'),
    databaseUrl: value('databaseUrl'),
    dbMaxMegabytes: value('dbMaxMegabytes'),
    rateLimit: value('rateLimit'),
    rateLimitByDefault: config.profile === 'hosted' && isUnset(env, 'rateLimit'),
    rateWindowSeconds: value('rateWindowSeconds'),
    sessionTtlSeconds: value('sessionTtlSeconds'),
    sweepIntervalSeconds: value('sweepIntervalSeconds'),
    trustProxy: value('trustProxy'),
    corsOrigins: value('corsOrigins'),
  })
  const uatUrl = value('uatUrl')
  config.uat =
    uatUrl === null
      ? null
      : {
          url: uatUrl,
          timeoutMs: value('uatTimeoutMs'),
          retries: value('uatRetries'),
          breakerFailures: value('uatBreakerFailures'),
          breakerCooldownSeconds: value('uatBreakerCooldownSeconds'),
        }
  config.webhookTargets = value('webhookTargets')
  config.stallTrace = value('stallTrace')
  return config as Config
}

const allSettings = (): Setting<unknown>[] => Object.values(SETTINGS)
const defaultOf = (setting: Setting<unknown>) => setting.shown ?? String(setting.fallback)

/** The variables as `--help` lists them. */
export function settingsHelp(): string {
  return allSettings()
    .map((setting) => `  ${setting.name.padEnd(38)}${setting.help.replaceAll('`', '')} [${defaultOf(setting)}]`)
    .join('\n')
}

/**
 * The variables as the docs' tables list them (Markdown): `names` picks and orders the rows; the
 * docs' own additions (`more`, whose links are relative to docs/) only in the full table.
 */
export function settingsTable(names?: string[]): string {
  const rows = names ? names.map((name) => allSettings().find((setting) => setting.name === name)!) : allSettings()
  const shown = (setting: Setting<unknown>) => setting.shown ?? `\`${String(setting.fallback)}\``
  const meaning = (setting: Setting<unknown>) =>
    names ? setting.help : `${setting.help}${setting.more?.startsWith(';') ? '' : ' '}${setting.more ?? ''}`.trim()
  return [
    '| variable | default | accepts | meaning |',
    '|---|---|---|---|',
    ...rows.map((setting) => `| \`${setting.name}\` | ${shown(setting)} | ${setting.rule.accepts} | ${meaning(setting)} |`),
  ].join('\n')
}
