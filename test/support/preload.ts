import { afterAll } from "bun:test";
import { removeTempDataDirs } from "./daemon.ts";

// Preloaded by bunfig.toml: hooks here run once for the whole test run. Tests hand one data
// directory to several daemons in turn, so the directories are removed only at the very end.
afterAll(removeTempDataDirs);
