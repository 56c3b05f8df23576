/** @module The form of a `policy_ref`: what the sandbox hands out, the only reference a path carries. */

/** The form of a `policy_ref`, the only reference a path carries. */
export const POLICY_REF = /^pol_sbx_[0-9a-f]{20}$/
