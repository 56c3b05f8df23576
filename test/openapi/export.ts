/**
 * Writes the OpenAPI document the app serves to .tmp/openapi.json, for `npm run lint:openapi`
 * (Redocly). The document comes from the running app's own routes and schemas.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createServices } from '../../src/modules/services'
import { withStorage } from '../unit/support/storage'

const app = createApp(createServices({ ...(await withStorage(loadConfig({}))), log: () => {} }))
const response = await app.handle(new Request('http://localhost/api/sandbox/openapi.json'))
if (!response.ok) throw new Error(`openapi.json answered ${response.status}`)
mkdirSync('.tmp', { recursive: true })
writeFileSync('.tmp/openapi.json', JSON.stringify(await response.json(), null, 2))
console.log('wrote .tmp/openapi.json')
