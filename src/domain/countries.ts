/** @module Assigned ISO 3166-1 alpha-2 country codes (fixture `data/countries.json`). */
import codes from '../../data/countries.json'

const ASSIGNED: ReadonlySet<string> = new Set(codes)

export function isAssignedCountry(code: string): boolean {
  return ASSIGNED.has(code)
}
