/** @module Schemas of the session endpoint. */
import { t } from 'elysia'

/** Explicit creation takes no fields: an empty body or `{}`. */
export const SessionBody = t.Object({}, { additionalProperties: false, issue: 'must be an empty object' })
