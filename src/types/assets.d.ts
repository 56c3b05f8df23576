// Files imported `with { type: 'text' }` arrive as their text; Bun embeds them in every build.
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const text: string
  export default text
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const text: string
  export default text
}
declare module '*/page/console.js' {
  const text: string
  export default text
}
declare module '*/page/console.css' {
  const text: string
  export default text
}
