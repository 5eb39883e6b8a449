/**
 * A private real PostgreSQL server for tests (Debian's postgresql package): a fresh cluster in its
 * own temporary folder (initdb: trust auth, superuser "devicerail", UTF8), its postmaster run as our
 * child on a free port of 127.0.0.1 only, with its Unix socket in the same folder. A test can stop
 * it, crash it (`kill`) and bring it back on the same port and data (`restart`).
 */
import { describe, test } from "bun:test";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL, type Subprocess } from "bun";
import { until } from "./wait.ts";

/** The server binaries: DEVICERAIL_TEST_PG_BIN, else the newest /usr/lib/postgresql/<version>/bin. */
export const PG_BIN = process.env.DEVICERAIL_TEST_PG_BIN ?? newestDebianBin();
export const postgresInstalled = ["initdb", "postgres"].every((b) => existsSync(join(PG_BIN, b)));
export const PG_SUPERUSER = "devicerail";
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const PORT_ATTEMPTS = 5;
const READY = "database system is ready to accept connections";

function newestDebianBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root).filter((v) => /^\d+(\.\d+)?$/.test(v) && existsSync(join(root, v, "bin", "initdb")))
    : [];
  versions.sort((a, b) => Number(b) - Number(a));
  return join(root, versions[0] ?? "*", "bin");
}

// PostgreSQL refuses to run as root, so root runs it as the package's postgres user. setpriv execs
// (runuser and su fork and wait), so the postmaster stays our direct child: we can signal it and
// see it exit. Its parent-death signal stops it even when the test process is killed outright;
// that ties it to the spawning thread, which for tests is the main one.
const asRoot = process.getuid?.() === 0;
const setpriv = Bun.which("setpriv");
function runAs(): string[] {
  if (asRoot && !setpriv)
    throw new Error("running as root, PostgreSQL needs setpriv (util-linux) to start as the postgres user");
  if (!setpriv) return [];
  return [
    setpriv,
    "--pdeathsig",
    "KILL",
    ...(asRoot ? ["--reuid=postgres", "--regid=postgres", "--init-groups"] : []),
    "--",
  ];
}

function postgresUser(): { uid: number; gid: number } {
  const r = Bun.spawnSync(["getent", "passwd", "postgres"]);
  const [, , uid, gid] = r.stdout.toString().split(":");
  if (r.exitCode !== 0 || uid === undefined || gid === undefined)
    throw new Error(
      "running as root, PostgreSQL needs the postgres system user that Debian's postgresql package creates",
    );
  return { uid: Number(uid), gid: Number(gid) };
}

/** A port the OS just handed out on 127.0.0.1, closed again so the server can bind it. */
function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** Resolves true when `promise` settles within `ms`, false when it does not. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([promise.then(() => true), late]).finally(() => clearTimeout(timer));
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

/** The postmaster's children (backends and background processes). Linux only. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The System V shared memory segments (/proc/sysvipc/shm); one stays listed until its last process detaches. */
function shmSegments(): { key: string; id: number }[] {
  try {
    return readFileSync("/proc/sysvipc/shm", "utf8")
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f.length > 1)
      .map((f) => ({ key: f[0] as string, id: Number(f[1]) }));
  } catch {
    return [];
  }
}

/** The postmaster's pid and its segment's key and id, from postmaster.pid (lines 1 and 7). */
function lockFile(dataDir: string): { pid: number; shm?: { key: string; id: number } } | undefined {
  try {
    const lines = readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n");
    const [key, id] = lines[6]?.trim().split(/\s+/) ?? [];
    return { pid: Number(lines[0]), ...(key && id ? { shm: { key, id: Number(id) } } : {}) };
  } catch {
    return undefined;
  }
}

const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

const FOLDER = /^devicerail-pg-(\d+)-/;

/**
 * Removes the folders (and leftover segments) of test processes that died with clusters running:
 * bun test runs no exit hooks, and the parent-death signal stops such a server but cleans nothing.
 */
function sweepAbandoned(): void {
  if (!existsSync("/proc/self")) return;
  for (const name of readdirSync(tmpdir())) {
    const owner = FOLDER.exec(name)?.[1];
    if (!owner || existsSync(`/proc/${owner}`)) continue;
    const dir = join(tmpdir(), name);
    const lock = lockFile(join(dir, "data"));
    if (lock && alive(lock.pid)) continue;
    // Key and id both match only while the dead cluster's folder exists: the key is its inode.
    const shm = lock?.shm;
    if (shm && shmSegments().some((s) => s.id === shm.id && s.key === shm.key))
      Bun.spawnSync(["ipcrm", "-m", String(shm.id)]);
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another user's leftovers.
    }
  }
}

const live = new Set<PgCluster>();
// Last resort when a script ends without stopping its clusters (bun test never calls it; see the
// parent-death signal and the sweep for that).
process.on("exit", () => {
  for (const cluster of live) cluster.abandon();
});

export interface StartPostgresOptions {
  /** The database created for the test and named in `url` (default devicerail_test). */
  database?: string;
  /** A fixed port instead of a free one. */
  port?: number;
  /** Extra server settings (-c NAME=VALUE), e.g. shared_preload_libraries for a benchmark. */
  settings?: Record<string, string>;
}

export class PgCluster implements AsyncDisposable {
  private proc: Subprocess<"ignore", "ignore", "pipe"> | null = null;
  private output = "";
  private stopped = false;

  private constructor(
    /** The temporary folder: the data directory, the Unix socket and nothing else. */
    readonly dir: string,
    readonly database: string,
    private currentPort: number,
    private readonly settings: Record<string, string> = {},
  ) {}

  static async start(options: StartPostgresOptions = {}): Promise<PgCluster> {
    if (!postgresInstalled)
      throw new Error(`no PostgreSQL server binaries in ${PG_BIN}: install Debian's postgresql package`);
    const database = options.database ?? "devicerail_test";
    if (!/^[a-z_][a-z0-9_]*$/.test(database))
      throw new Error(`database name ${database} is not a plain lower-case identifier`);
    sweepAbandoned();
    const dir = mkdtempSync(join(tmpdir(), `devicerail-pg-${process.pid}-`));
    const cluster = new PgCluster(dir, database, options.port ?? 0, options.settings ?? {});
    live.add(cluster);
    try {
      if (asRoot) {
        const { uid, gid } = postgresUser();
        chownSync(dir, uid, gid);
      }
      await cluster.initdb();
      await cluster.listen(options.port === undefined);
      await using admin = new SQL({ url: cluster.urlFor("postgres"), max: 1 });
      await admin.unsafe(`CREATE DATABASE ${database}`);
    } catch (e) {
      await cluster.stop();
      throw e;
    }
    return cluster;
  }

  get port(): number {
    return this.currentPort;
  }

  get dataDir(): string {
    return join(this.dir, "data");
  }

  /** postgres://devicerail@127.0.0.1:PORT/DATABASE (trust auth: no password). */
  get url(): string {
    return this.urlFor(this.database);
  }

  urlFor(database: string): string {
    return `postgres://${PG_SUPERUSER}@127.0.0.1:${this.currentPort}/${database}`;
  }

  get running(): boolean {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** The server's own log (all its runs), for failure messages. */
  log(): string {
    return this.output;
  }

  private env(): Record<string, string> {
    return { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", TZ: "UTC" };
  }

  private async initdb(): Promise<void> {
    // --no-sync: a throwaway cluster need not survive a power cut, and it halves the time.
    const args = ["-D", this.dataDir, "-U", PG_SUPERUSER, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"];
    const proc = Bun.spawn([...runAs(), join(PG_BIN, "initdb"), ...args], {
      cwd: this.dir,
      env: this.env(),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: 60_000,
      killSignal: "SIGKILL",
    });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    if (code !== 0) {
      const hint = asRoot ? ` (the postgres user must be able to reach ${this.dir})` : "";
      throw new Error(`initdb failed with ${proc.signalCode ?? `exit code ${code}`}${hint}:\n${out}${err}`);
    }
  }

  /** Starts the postmaster; with `pickPort`, on a fresh free port, again on another if it was taken meanwhile. */
  private async listen(pickPort: boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (pickPort) this.currentPort = freePort();
      const mark = this.output.length;
      if (await this.spawn()) return;
      const run = this.output.slice(mark);
      if (!(pickPort && attempt < PORT_ATTEMPTS && /could not bind .*Address already in use/.test(run))) {
        throw new Error(`PostgreSQL did not start on 127.0.0.1:${this.currentPort}:\n${run}`);
      }
    }
  }

  /** Resolves true once the server accepts connections, false when it exits or times out first. */
  private async spawn(): Promise<boolean> {
    const settings = {
      listen_addresses: "127.0.0.1",
      unix_socket_directories: this.dir,
      fsync: "off",
      lc_messages: "C",
      ...this.settings,
    };
    const proc = Bun.spawn(
      [
        ...runAs(),
        join(PG_BIN, "postgres"),
        "-D",
        this.dataDir,
        "-p",
        String(this.currentPort),
        ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
      ],
      {
        cwd: this.dir,
        env: this.env(),
        stdin: "ignore",
        stdout: "ignore",
        stderr: "pipe",
      },
    );
    this.proc = proc;
    // The log is read to its end (the server must never block on a full pipe); the ready line is
    // the server's own word that it accepts connections. The pipe ends only when the postmaster
    // and every child it started have exited.
    const start = this.output.length;
    const ready = new Promise<boolean>((resolve) => {
      void (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of proc.stderr) {
          this.output += decoder.decode(chunk, { stream: true });
          if (this.output.includes(READY, start)) resolve(true);
        }
        resolve(false);
      })();
    });
    let answer = false;
    if (
      !(await settlesWithin(
        ready.then((r) => (answer = r)),
        START_TIMEOUT_MS,
      ))
    )
      this.output += `\n(no "${READY}" within ${START_TIMEOUT_MS} ms)\n`;
    if (!answer) await this.kill();
    return answer;
  }

  /** A fast shutdown (the server ends its sessions, checkpoints and exits); a hard kill if it hangs. */
  private async shutdown(): Promise<void> {
    const proc = this.proc;
    if (!proc || !this.running) return;
    proc.kill("SIGINT");
    if (!(await settlesWithin(proc.exited, STOP_TIMEOUT_MS))) await this.kill();
  }

  /**
   * SIGKILLs the postmaster and every child it has, as a crash would, and removes the segment they
   * share. Sync, for the exit hook. The postmaster is stopped first so that it forks no more, and
   * killed last: a backend that outlived it would notice and send its client an error first.
   */
  private killNow(): number | undefined {
    const proc = this.proc;
    if (!proc || !this.running) return undefined;
    const shm = lockFile(this.dataDir)?.shm?.id;
    signal(proc.pid, "SIGSTOP");
    for (const pid of [...childrenOf(proc.pid), proc.pid]) signal(pid, "SIGKILL");
    // Marked for removal now, freed when its last process has exited.
    if (shm !== undefined) Bun.spawnSync(["ipcrm", "-m", String(shm)]);
    return shm;
  }

  /**
   * Kills the server hard (SIGKILL to all its processes, no shutdown checkpoint); resolves once
   * none of them is left, so `restart()` starts at once, with crash recovery.
   */
  async kill(): Promise<void> {
    const shm = this.killNow();
    await this.proc?.exited;
    if (shm === undefined) return;
    // The children are not ours to wait for; their shared segment disappears with the last of
    // them, and a new postmaster refuses to start while it is still attached.
    await until(
      `the processes of the server on port ${this.currentPort} to exit`,
      () => !shmSegments().some((s) => s.id === shm),
      STOP_TIMEOUT_MS,
    );
  }

  /** Stops the server (gracefully when it runs) and starts it again on the same port and data. */
  async restart(): Promise<void> {
    if (this.stopped) throw new Error("the cluster is stopped for good");
    await this.shutdown();
    await this.listen(false);
  }

  /** Stops the server and removes the folder. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.shutdown();
    live.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** For the process exit hook only: kills the server and removes the folder synchronously. */
  abandon(): void {
    this.killNow();
    live.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

export const startPostgres = (options?: StartPostgresOptions): Promise<PgCluster> => PgCluster.start(options);

/** Stops every cluster still running; for a root-level afterAll (bun test calls no exit hooks). */
export async function stopAllPostgres(): Promise<void> {
  await Promise.all([...live].map((cluster) => cluster.stop()));
}

let warned = false;

/**
 * `describe` for suites that need a real PostgreSQL. Present: the suite runs. Missing under CI=true
 * (or 1): one failing test says so (a CI image without it must not pass by skipping). Missing
 * elsewhere: the suite is skipped with a message.
 */
export function describeWithPostgres(name: string, body: () => void): void {
  if (postgresInstalled) return describe(name, body);
  if (["true", "1"].includes((process.env.CI ?? "").toLowerCase())) {
    return describe(name, () => {
      test(`PostgreSQL is installed in ${PG_BIN}`, () => {
        throw new Error(
          `no PostgreSQL server in ${PG_BIN}: install Debian's postgresql package (apt-get install -y postgresql); these tests must not be skipped in CI`,
        );
      });
    });
  }
  if (!warned)
    console.warn(
      `skipping PostgreSQL tests: no server in ${PG_BIN} (apt-get install -y postgresql); under CI=true they fail instead`,
    );
  warned = true;
  describe.skip(name, body);
}
