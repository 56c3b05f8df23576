/** @module `GET /healthz` (the process answers) and `GET /readyz` (the database takes a write). */
import { Elysia } from 'elysia'
import type { Storage } from '../storage/storage'

export function healthRoutes(storage: Storage) {
  return new Elysia({ name: 'health-routes' })
    .get('/healthz', () => ({ status: 'ok' }))
    .get('/readyz', async ({ set }) => {
      try {
        await storage.ping()
        return { status: 'ready' }
      } catch {
        set.status = 503
        return { status: 'storage_unavailable' }
      }
    })
}
