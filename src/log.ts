/**
 * @module The one log format: a JSON object per line, `time` (ISO 8601, UTC) first, then the fields
 * the caller names. Callers pass fields, never a line they built, so every line parses the same way.
 */

export type LogFields = Record<string, unknown>
export type Log = (fields: LogFields) => void

/** The line for these fields, stamped with the current time. */
export function logLine(fields: LogFields): string {
  return JSON.stringify({ time: new Date().toISOString(), ...fields })
}

/** A log writing each line with `write` (stdout by default). */
export function createLog(write: (line: string) => void = (line) => console.log(line)): Log {
  return (fields) => write(logLine(fields))
}
