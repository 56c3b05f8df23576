import { describe, expect, test } from 'bun:test'
import { ConfigError, SETTINGS, loadConfig, settingsHelp, settingsTable, withFlags } from '../../src/config'
import { CONFIG_TABLES, withConfigTable } from '../support/config-docs'

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`)
}

describe('loadConfig', () => {
  test('defaults match the contract', () => {
    expect(loadConfig({})).toEqual({
      profile: 'hosted',
      port: 3000,
      host: '0.0.0.0',
      dbPath: 'data/sandbox.db',
      databaseUrl: null,
      dbMaxMegabytes: 0,
      rateLimit: 30,
      rateLimitByDefault: true,
      rateWindowSeconds: 600,
      sessionTtlSeconds: 3600,
      sweepIntervalSeconds: 60,
      trustProxy: 0,
      corsOrigins: [],
      uat: null,
      webhookTargets: 'public',
      stallTrace: null,
    })
  })

  test('reads every variable', () => {
    expect(
      loadConfig({
        PORT: '8080',
        HOST: '127.0.0.1',
        SANDBOX_DB_PATH: ':memory:',
        SANDBOX_DB_MAX_MB: '64',
        SANDBOX_RATE_LIMIT: '5',
        SANDBOX_RATE_WINDOW_SECONDS: '90',
        SANDBOX_SESSION_TTL_SECONDS: '120',
        SANDBOX_SWEEP_INTERVAL_SECONDS: '7',
        SANDBOX_TRUST_PROXY: '2',
        SANDBOX_CORS_ORIGINS: 'https://tool.example, http://localhost:5173',
        SANDBOX_WEBHOOK_TARGETS: 'public',
        SANDBOX_STALL_TRACE: '/tmp/stalls.jsonl',
      }),
    ).toEqual({
      profile: 'hosted',
      port: 8080,
      host: '127.0.0.1',
      dbPath: ':memory:',
      databaseUrl: null,
      dbMaxMegabytes: 64,
      rateLimit: 5,
      rateLimitByDefault: false,
      rateWindowSeconds: 90,
      sessionTtlSeconds: 120,
      sweepIntervalSeconds: 7,
      trustProxy: 2,
      corsOrigins: ['https://tool.example', 'http://localhost:5173'],
      uat: null,
      webhookTargets: 'public',
      stallTrace: '/tmp/stalls.jsonl',
    })
  })

  test('SANDBOX_PROFILE=local lifts the fair-use limit and listens on loopback, so webhooks reach this machine; the rest stays', () => {
    const hosted = loadConfig({})
    const local = loadConfig({ SANDBOX_PROFILE: 'local' })
    expect(local).toEqual({ ...hosted, profile: 'local', host: '127.0.0.1', rateLimit: 1_000_000_000, rateLimitByDefault: false, webhookTargets: 'any' })
    expect(local.sessionTtlSeconds).toBe(3600)
    expect(loadConfig({ SANDBOX_PROFILE: 'hosted' })).toEqual(hosted)
    expect(loadConfig({ SANDBOX_PROFILE: '' })).toEqual(hosted)
    expect(configError({ SANDBOX_PROFILE: 'ci' }).message).toBe('SANDBOX_PROFILE must be one of hosted, local (got "ci")')
  })

  test('a variable that is set wins over either profile', () => {
    const local = loadConfig({ SANDBOX_PROFILE: 'local', HOST: '0.0.0.0', SANDBOX_RATE_LIMIT: '50', SANDBOX_RATE_WINDOW_SECONDS: '60' })
    expect(local).toMatchObject({ host: '0.0.0.0', rateLimit: 50, rateWindowSeconds: 60, webhookTargets: 'public' })
    expect(loadConfig({ SANDBOX_PROFILE: 'local', SANDBOX_WEBHOOK_TARGETS: 'public' }).webhookTargets).toBe('public')
    expect(loadConfig({ SANDBOX_PROFILE: 'local', SANDBOX_TRUST_PROXY: '1' }).webhookTargets).toBe('public')
    expect(loadConfig({ SANDBOX_PROFILE: 'local', SANDBOX_SESSION_TTL_SECONDS: '120' }).sessionTtlSeconds).toBe(120)
    expect(loadConfig({ SANDBOX_RATE_LIMIT: '1000000000' }).rateLimit).toBe(1_000_000_000)
  })

  test('only a hosted limit nobody chose is one a refusal offers to lift', () => {
    expect(loadConfig({}).rateLimitByDefault).toBe(true)
    expect(loadConfig({ SANDBOX_RATE_LIMIT: '' }).rateLimitByDefault).toBe(true)
    // Chosen, even the default's own value: a hosted operator who set it meant it.
    expect(loadConfig({ SANDBOX_RATE_LIMIT: '30' }).rateLimitByDefault).toBe(false)
    expect(loadConfig({ SANDBOX_PROFILE: 'local' }).rateLimitByDefault).toBe(false)
    expect(loadConfig({ SANDBOX_PROFILE: 'local', SANDBOX_RATE_LIMIT: '30' }).rateLimitByDefault).toBe(false)
  })

  test('--local on the command line is SANDBOX_PROFILE=local, and wins over the variable', () => {
    expect(loadConfig(withFlags({}, ['--local']))).toEqual(loadConfig({ SANDBOX_PROFILE: 'local' }))
    expect(loadConfig(withFlags({ SANDBOX_PROFILE: 'hosted' }, ['--local'])).profile).toBe('local')
    expect(loadConfig(withFlags({ SANDBOX_RATE_LIMIT: '7' }, ['--local'])).rateLimit).toBe(7)
    expect(loadConfig(withFlags({}, [])).profile).toBe('hosted')
    expect(loadConfig(withFlags({}, ['--help'])).profile).toBe('hosted')
    const env = { PORT: '1234' }
    withFlags(env, ['--local'])
    expect(env, 'the environment itself is not changed').toEqual({ PORT: '1234' })
  })

  test('webhooks deliver anywhere by default only from a sandbox on loopback with its own file and no proxy; another value stops start-up', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost', 'sandbox.localhost']) expect(loadConfig({ HOST: host }).webhookTargets, host).toBe('any')
    for (const host of [undefined, '0.0.0.0', '::', '192.168.1.5', '10.0.0.2', 'sandbox.internal', 'localhost.example']) {
      expect(loadConfig({ HOST: host }).webhookTargets, host).toBe('public')
    }
    expect(loadConfig({ HOST: '127.0.0.1', SANDBOX_DATABASE_URL: 'postgres://u@127.0.0.1:5432/db' }).webhookTargets).toBe('public')
    // Behind a proxy on the same machine, others reach it all the same.
    expect(loadConfig({ HOST: '127.0.0.1', SANDBOX_TRUST_PROXY: '1' }).webhookTargets).toBe('public')
    expect(loadConfig({ SANDBOX_WEBHOOK_TARGETS: 'any' }).webhookTargets).toBe('any')
    expect(loadConfig({ HOST: '127.0.0.1', SANDBOX_WEBHOOK_TARGETS: 'public' }).webhookTargets).toBe('public')
    expect(loadConfig({ SANDBOX_DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', SANDBOX_WEBHOOK_TARGETS: 'any' }).webhookTargets).toBe('any')
    expect(configError({ SANDBOX_WEBHOOK_TARGETS: 'private' }).message).toBe('SANDBOX_WEBHOOK_TARGETS must be one of any, public (got "private")')
  })

  test('SANDBOX_CORS_ORIGINS lists exact origins: a path, a wildcard or another scheme stops start-up', () => {
    for (const value of ['*', 'https://tool.example/', 'https://tool.example/app', 'tool.example', 'ftp://tool.example', 'https://tool.example,,http://a.b']) {
      expect(configError({ SANDBOX_CORS_ORIGINS: value }).message).toStartWith('SANDBOX_CORS_ORIGINS must list origins')
    }
  })

  test('an empty numeric variable means its default', () => {
    expect(loadConfig({ PORT: '', SANDBOX_RATE_LIMIT: '' }).port).toBe(3000)
    expect(loadConfig({ SANDBOX_RATE_LIMIT: '' }).rateLimit).toBe(30)
  })

  test('PORT 0 (any free port) is allowed', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0)
  })

  const BAD: [string, string][] = [
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['PORT', '1e3'],
    ['PORT', '0x50'],
    ['SANDBOX_DB_MAX_MB', '-1'],
    ['SANDBOX_DB_MAX_MB', 'big'],
    ['SANDBOX_RATE_LIMIT', '0'],
    ['SANDBOX_RATE_LIMIT', 'thirty'],
    ['SANDBOX_RATE_LIMIT', '-5'],
    ['SANDBOX_RATE_WINDOW_SECONDS', '0'],
    ['SANDBOX_RATE_WINDOW_SECONDS', '10m'],
    ['SANDBOX_SESSION_TTL_SECONDS', '0'],
    ['SANDBOX_SESSION_TTL_SECONDS', '3600.5'],
    ['SANDBOX_SWEEP_INTERVAL_SECONDS', '0'],
    ['SANDBOX_SWEEP_INTERVAL_SECONDS', 'never'],
    ['SANDBOX_TRUST_PROXY', '-1'],
    ['SANDBOX_TRUST_PROXY', 'true'],
    ['SANDBOX_TRUST_PROXY', '1000'],
    ['HOST', '   '],
    ['HOST', '999.1.1.1'],
    ['HOST', '1.2.3'],
    ['HOST', 'a b'],
    ['HOST', 'http://localhost'],
    ['HOST', '-bad-.example'],
    ['HOST', '::1::2'],
    ['SANDBOX_DB_PATH', '  '],
  ]

  test.each(BAD)('%s=%p is a ConfigError with a one-line message naming the variable', (name, value) => {
    const error = configError({ [name]: value })
    expect(error.message).toContain(name)
    expect(error.message).not.toContain('\n')
    // Only the offending variable is named.
    for (const other of [
      'PORT',
      'HOST',
      'SANDBOX_DB_PATH',
      'SANDBOX_RATE_LIMIT',
      'SANDBOX_RATE_WINDOW_SECONDS',
      'SANDBOX_SESSION_TTL_SECONDS',
      'SANDBOX_SWEEP_INTERVAL_SECONDS',
      'SANDBOX_TRUST_PROXY',
    ]) {
      if (other !== name && !name.includes(other)) expect(error.message).not.toContain(other)
    }
  })

  test('HOST takes IPv4 and IPv6 addresses and host names', () => {
    for (const host of ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost', 'sandbox-1.internal', 'api']) expect(loadConfig({ HOST: host }).host).toBe(host)
  })

  test('a value with a line break still gives a one-line message', () => {
    const error = configError({ SANDBOX_RATE_LIMIT: '30\nSANDBOX_TRUST_PROXY=9' })
    expect(error.message.split('\n')).toHaveLength(1)
    expect(error.message.startsWith('SANDBOX_RATE_LIMIT')).toBe(true)
  })

  test('each bad variable is named even when another is fine', () => {
    expect(configError({ PORT: '3000', SANDBOX_RATE_WINDOW_SECONDS: 'abc' }).message).toContain('SANDBOX_RATE_WINDOW_SECONDS')
  })
})

describe('UAT gateway configuration', () => {
  test('is off without SANDBOX_UAT_URL, and reads its settings with defaults when set', () => {
    expect(loadConfig({}).uat).toBeNull()
    expect(loadConfig({ SANDBOX_UAT_URL: 'http://127.0.0.1:4400/' }).uat).toEqual({
      url: 'http://127.0.0.1:4400',
      timeoutMs: 2000,
      retries: 2,
      breakerFailures: 5,
      breakerCooldownSeconds: 30,
    })
    expect(loadConfig({ SANDBOX_UAT_URL: 'https://uat.insurer.example/api', SANDBOX_UAT_TIMEOUT_MS: '500', SANDBOX_UAT_RETRIES: '0' }).uat).toMatchObject({
      url: 'https://uat.insurer.example/api',
      timeoutMs: 500,
      retries: 0,
    })
  })

  test('a bad value names its variable', () => {
    for (const [name, value] of [
      ['SANDBOX_UAT_URL', 'not a url'],
      ['SANDBOX_UAT_URL', 'ftp://x'],
      ['SANDBOX_UAT_TIMEOUT_MS', '10'],
      ['SANDBOX_UAT_RETRIES', '9'],
    ] as const) {
      const env: Record<string, string> = { SANDBOX_UAT_URL: 'http://127.0.0.1:4400', [name]: value }
      expect(() => loadConfig(env)).toThrow(name)
    }
  })
})

describe('the configuration table', () => {
  test('the docs show the tables it makes (npm run docs:config rewrites them)', () => {
    for (const file of Object.keys(CONFIG_TABLES)) {
      const { current, made } = withConfigTable(file)
      expect(current, `${file}: run npm run docs:config`).toBe(made)
    }
  })

  test('--help and the full table name every variable loadConfig reads, with its default', () => {
    const help = settingsHelp()
    const table = settingsTable()
    for (const setting of Object.values(SETTINGS) as { name: string; shown?: string; fallback: unknown }[]) {
      expect(help).toContain(setting.name)
      expect(table).toContain(`\`${setting.name}\``)
      // Unset, the variable is its fallback: what both say is the default.
      expect(help).toContain(`[${setting.shown ?? String(setting.fallback)}]`)
    }
    expect(help).toContain('SANDBOX_RATE_LIMIT                    requests per window, per session and per network [30; 1000000000 when local]')
    expect(help).toContain('HOST                                  address to listen on [0.0.0.0; 127.0.0.1 when local]')
  })

  test('loadConfig reads every variable of the table: a value its rule refuses stops start-up, naming it', () => {
    for (const setting of Object.values(SETTINGS) as { name: string; rule: { refusesEmpty?: boolean } }[]) {
      // The gateway's own settings are read only with a gateway; a blank text, any other rule's nonsense.
      const env = { SANDBOX_UAT_URL: 'http://uat.example', [setting.name]: setting.rule.refusesEmpty ? ' ' : '%not valid%' }
      expect(configError(env).message).toStartWith(`${setting.name} `)
    }
  })
})
