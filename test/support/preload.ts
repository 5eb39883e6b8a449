import { afterAll, afterEach } from "bun:test";
import { removeTempDataDirs, stopBackgroundDaemons } from "./daemon.ts";
import { stopAllPostgres } from "./postgres.ts";

// Preloaded by bunfig.toml: hooks here run for the whole test run. Tests hand one data directory
// to several daemons in turn, so the directories are removed only at the very end; the daemons
// CLI commands start in the background are stopped after each test.
afterEach(stopBackgroundDaemons);
afterAll(removeTempDataDirs);
// A PostgreSQL cluster a test forgot to stop is stopped at the end (bun test runs no exit hooks).
afterAll(stopAllPostgres);
