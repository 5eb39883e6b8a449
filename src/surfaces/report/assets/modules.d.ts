/**
 * The report page's script (generated/report.js.txt, the bundle of browser/) and style, imported as
 * text (Bun's text loader) so the binary embeds them.
 */
declare module "*.js.txt" {
  const text: string;
  export default text;
}
declare module "*.css.txt" {
  const text: string;
  export default text;
}
