/**
 * The interaction toolkit the CLI and MCP share (issue 26): one ref scheme, one element-line
 * renderer with a terminal and a model style, one closest-elements ranking, one disambiguation
 * rule and one view of what a device can do. It imports only src/protocol.
 */
export * from "./capabilities.ts";
export * from "./closest.ts";
export * from "./element-actions.ts";
export * from "./element-line.ts";
export * from "./observation-text.ts";
export * from "./refs.ts";
