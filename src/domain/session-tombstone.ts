/**
 * @module How long an ended session is still recognised: the sweep keeps its token's hash that long,
 * and the session cookie outlives the session by as much.
 */

/** An expired session's token hash is kept this long, so that a late call still gets `session_expired`. */
export const TOMBSTONE_MS = 24 * 60 * 60 * 1000
