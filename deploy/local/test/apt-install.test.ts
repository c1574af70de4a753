import { spawn } from "node:child_process";
import { join } from "node:path";
import { eventually } from "@analytics/testing";

// .ci/run installs Go through deploy/local/apt-install.sh: while another apt or dpkg holds the
// package lock it waits, where apt-get fails at once ("Could not get lock").

const script = join(__dirname, "../apt-install.sh");

/** Holds dpkg's frontend lock (an fcntl lock, as apt and dpkg take it) until release(). */
function holdDpkgLock() {
  const holder = spawn("python3", ["-c", "import fcntl,sys; f=open('/var/lib/dpkg/lock-frontend','w'); fcntl.lockf(f, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const held = new Promise<void>((resolve) => holder.stdout.once("data", () => resolve()));
  const gone = new Promise((resolve) => holder.once("exit", resolve));
  return { held, release: () => (holder.stdin.end(), gone) };
}

describe("apt-install.sh", () => {
  it("waits while another process holds the package lock, then installs", async () => {
    const lock = holdDpkgLock();
    await lock.held;
    // bash is installed: apt-get has nothing to fetch, but still takes the lock.
    const install = spawn("bash", [script, "bash"], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    install.stderr.on("data", (c) => (output += c));
    const exited = new Promise((resolve) => install.once("exit", resolve));
    try {
      await eventually(async () => output.includes("waiting for the package lock"), 60_000, () => `the wait, not a failure: ${output}`);
      expect(install.exitCode).toBeNull();
    } finally {
      await lock.release();
    }
    expect(await exited).toBe(0);
  }, 120_000);

  it("gives up after DPKG_LOCK_WAIT_SECONDS", async () => {
    const lock = holdDpkgLock();
    await lock.held;
    try {
      const install = spawn("bash", [script, "bash"], { env: { ...process.env, DPKG_LOCK_WAIT_SECONDS: "0" }, stdio: ["ignore", "ignore", "pipe"] });
      let output = "";
      install.stderr.on("data", (c) => (output += c));
      expect(await new Promise((resolve) => install.once("exit", resolve))).not.toBe(0);
      expect(output).toMatch(/lock/i);
    } finally {
      await lock.release();
    }
  }, 120_000);
});
