/** SQL files imported as text (Bun's text loader) so migrations are embedded in the binary. */
declare module "*.sql" {
  const sql: string;
  export default sql;
}
