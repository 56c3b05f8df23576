import { envelope, expect, test } from './support/fixtures'

test.describe('POST /api/sandbox/session', () => {
  test('creates a session, sets the HttpOnly cookie and reports the limits', async ({ request }) => {
    const response = await request.post('/api/sandbox/session')
    expect(response.status()).toBe(200)
    const body = await envelope(response)
    expect(body.ok).toBe(true)
    expect(body.data.session_ref).toMatch(/^sbx_[0-9a-f]{20}$/)
    expect(body.data.limits).toEqual({ requests: 30, window_minutes: 10, session_minutes: 60 })
    expect(body.meta.session_expires_at).toBe(body.data.expires_at)
    const cookie = response.headers()['set-cookie']
    expect(cookie).toMatch(/^sbx_session=[A-Za-z0-9_-]{43};/)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Strict')
    expect(cookie).toContain('Path=/')
    expect(cookie).toContain('Max-Age=3600')
    expect(cookie).not.toContain(body.data.session_ref)
  })
})
