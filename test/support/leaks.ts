/** What no answer may show of the server's insides: for the HTTP suite's checks and the fuzz test's alike. */
export const LEAK_PATTERNS = [
  /\n\s*at\s/, // a stack frame
  /\bat\s+\S+\s+\(/, // "at fn (" on one line
  /(?:[A-Za-z]:)?(?:[\\/][\w.@-]+)+\.(?:ts|js|mjs|cjs|tsx)\b/, // a source file path
  /node_modules/,
  /\/(?:work|home|tmp|usr|src)\//,
  /\bstack\b/i,
  /SQLITE_/i,
  /database is locked/i,
  /TypeError|ReferenceError|SyntaxError|RangeError/, // a JavaScript error's name
]
