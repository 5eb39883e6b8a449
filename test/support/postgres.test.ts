import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { SQL } from "bun";
import { describeWithPostgres, startPostgres } from "./postgres.ts";
import { until } from "./wait.ts";

// A cluster starts in under a second here; the margin is for a loaded CI machine.
const SLOW = 30_000;
const client = (url: string) => new SQL({ url, max: 1, connectionTimeout: 5 });

/** The postmaster's process id, from its lock file. */
function postmasterPid(dataDir: string): number {
  return Number(readFileSync(`${dataDir}/postmaster.pid`, "utf8").split("\n")[0]);
}
/** Whether a process exists and has not exited (a zombie has). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** The error code a query fails with, or "answered". */
const outcome = (query: Promise<unknown>) =>
  query.then(
    () => "answered",
    (e: SQL.PostgresError) => e.code,
  );

describeWithPostgres("startPostgres", () => {
  test(
    "serves SQL to Bun's client over its url when started",
    async () => {
      await using pg = await startPostgres();
      expect(pg.url).toBe(`postgres://devicerail@127.0.0.1:${pg.port}/devicerail_test`);
      await using sql = client(pg.url);
      const [row] =
        await sql`SELECT now() AS now, current_user AS "user", current_database() AS db, current_setting('server_encoding') AS encoding, current_setting('listen_addresses') AS listen, current_setting('unix_socket_directories') AS socket`;
      const { now, ...settings } = row;
      expect(now).toBeInstanceOf(Date);
      expect(Math.abs(now.getTime() - Date.now())).toBeLessThan(60_000);
      expect(settings).toEqual({
        user: "devicerail",
        db: "devicerail_test",
        encoding: "UTF8",
        listen: "127.0.0.1",
        socket: pg.dir,
      });
      await sql`CREATE TABLE events (id serial PRIMARY KEY, kind text NOT NULL)`;
      await sql`INSERT INTO events ${sql([{ kind: "device.connected" }, { kind: "session.started" }])}`;
      expect(await sql`SELECT id, kind FROM events ORDER BY id`).toEqual([
        { id: 1, kind: "device.connected" },
        { id: 2, kind: "session.started" },
      ]);
    },
    SLOW,
  );

  test(
    "keeps its data and port when restarted",
    async () => {
      await using pg = await startPostgres();
      const port = pg.port;
      {
        await using sql = client(pg.url);
        await sql`CREATE TABLE kept (v text)`;
        await sql`INSERT INTO kept VALUES ('before restart')`;
      }
      await pg.restart();
      expect(pg.port).toBe(port);
      await using sql = client(pg.url);
      expect(await sql`SELECT v FROM kept`).toEqual([{ v: "before restart" }]);
    },
    SLOW,
  );

  test(
    "fails queries and connections when killed and serves the committed data again when restarted",
    async () => {
      await using pg = await startPostgres();
      await using open = client(pg.url);
      await open`CREATE TABLE t (v int)`;
      await open`INSERT INTO t VALUES (1)`;
      const pid = postmasterPid(pg.dataDir);
      // Whether or not the query has reached the server when it dies, it cannot succeed.
      const inFlight = open`SELECT pg_sleep(30)`.execute();
      await pg.kill();
      expect({ running: pg.running, alive: alive(pid) }).toEqual({ running: false, alive: false });
      expect(await outcome(inFlight)).toMatch(/^ERR_POSTGRES_CONNECTION_(CLOSED|REFUSED)$/);
      await using fresh = client(pg.url);
      expect(await outcome(fresh`SELECT 1`.execute())).toBe("ERR_POSTGRES_CONNECTION_REFUSED");
      await pg.restart();
      // Bun's client reconnects by itself on the next query.
      expect(await open`SELECT v FROM t`).toEqual([{ v: 1 }]);
    },
    SLOW,
  );

  test(
    "runs two clusters at once on different ports",
    async () => {
      const [first, second] = await Promise.all([startPostgres(), startPostgres({ database: "other" })]);
      await using a = first;
      await using b = second;
      expect(a.port).not.toBe(b.port);
      await using sa = client(a.url);
      await using sb = client(b.url);
      await sa`CREATE TABLE only_in_a (v int)`;
      expect(await sa`SELECT to_regclass('only_in_a')::text AS t`).toEqual([{ t: "only_in_a" }]);
      expect(await sb`SELECT to_regclass('only_in_a')::text AS t, current_database() AS db`).toEqual([
        { t: null, db: "other" },
      ]);
    },
    SLOW,
  );

  test(
    "removes its folder and leaves no process when stopped after a kill",
    async () => {
      const pg = await startPostgres();
      const pid = postmasterPid(pg.dataDir);
      await pg.kill();
      await pg.stop();
      expect({ dir: existsSync(pg.dir), alive: alive(pid) }).toEqual({ dir: false, alive: false });
    },
    SLOW,
  );

  test(
    "removes its folder and leaves no process when stopped",
    async () => {
      const pg = await startPostgres();
      const pid = postmasterPid(pg.dataDir);
      await pg.stop();
      expect({ dir: existsSync(pg.dir), alive: alive(pid) }).toEqual({ dir: false, alive: false });
      await using sql = client(pg.url);
      expect(await outcome(sql`SELECT 1`.execute())).toBe("ERR_POSTGRES_CONNECTION_REFUSED");
    },
    SLOW,
  );

  test(
    "fails with the server's log and leaves no folder when its fixed port is taken",
    async () => {
      const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
      const failure = await startPostgres({ port: taken.port }).then(
        async (pg) => (await pg.stop(), "started"),
        (e: Error) => e.message,
      );
      taken.stop(true);
      expect(failure).toStartWith(`PostgreSQL did not start on 127.0.0.1:${taken.port}:\n`);
      expect(failure).toContain("Address already in use");
      expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`devicerail-pg-${process.pid}-`))).toEqual([]);
    },
    SLOW,
  );

  test(
    "dies with a test process killed outright, and the next start removes its folder",
    async () => {
      const script = `import { startPostgres } from ${JSON.stringify(`${import.meta.dir}/postgres.ts`)};
      const pg = await startPostgres();
      await Bun.write(Bun.stdout, pg.dataDir);
      process.kill(process.pid, "SIGKILL");`;
      const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
      const [dataDir] = await Promise.all([new Response(child.stdout).text(), child.exited]);
      expect(child.signalCode).toBe("SIGKILL");
      const pid = postmasterPid(dataDir);
      await until("the orphaned postmaster to die", () => !alive(pid));
      await using _next = await startPostgres();
      expect(existsSync(dataDir)).toBe(false);
    },
    SLOW,
  );
});
