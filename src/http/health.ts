/** @module `GET /healthz` (the process answers) and `GET /readyz` (the database takes a write lock). */
import { Elysia } from 'elysia'
import { immediate } from '../storage/driver'
import type { Services } from '../services'

export function healthRoutes(services: Services) {
  return new Elysia({ name: 'health-routes' })
    .get('/healthz', () => ({ status: 'ok' }))
    .get('/readyz', ({ set }) => {
      try {
        immediate(services.db, () => services.db.prepare('SELECT 1').get())
        return { status: 'ready' }
      } catch {
        set.status = 503
        return { status: 'storage_unavailable' }
      }
    })
}
