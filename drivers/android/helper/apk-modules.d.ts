/** An APK imported `with { type: "file" }`: its path (inside a compiled binary, an embedded file's). */
declare module "*.apk" {
  const path: string;
  export default path;
}
