import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { freePort } from "./ports";

export interface NatsCluster {
  /** Client URL of each server. */
  urls: string[];
  /** Kills one server (SIGKILL), as a node that is lost. */
  kill(index: number): Promise<void>;
  /** Starts a killed server again on its ports and store. */
  restart(index: number): void;
  /** Stops every server and removes their store directories. */
  stop(): Promise<void>;
}

/**
 * `size` nats-server processes (NATS_SERVER, default `nats-server` on the PATH) forming one
 * JetStream cluster on loopback ports, each with its store under a temporary directory. Resolves
 * once JetStream answers (a meta leader is elected).
 */
export async function startNatsCluster(size = 3, timeoutMs = 30_000): Promise<NatsCluster> {
  const dir = mkdtempSync(join(tmpdir(), "nats-cluster-"));
  const ports = await Promise.all(Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort() })));
  const routes = ports.map((p) => `nats://127.0.0.1:${p.route}`).join(",");
  const start = (i: number) =>
    spawn(
      process.env.NATS_SERVER ?? "nats-server",
      ["-a", "127.0.0.1", "-p", String(ports[i].client), "-n", `n${i}`, "-js", "-sd", join(dir, `n${i}`), "--cluster_name", "test", "--cluster", `nats://127.0.0.1:${ports[i].route}`, "--routes", routes],
      { stdio: "ignore" },
    );
  const servers: ChildProcess[] = ports.map((_, i) => start(i));
  const urls = ports.map((p) => `nats://127.0.0.1:${p.client}`);
  const kill = async (i: number) => {
    const s = servers[i];
    if (s.exitCode === null && s.signalCode === null) await new Promise((resolve) => (s.once("exit", resolve), s.kill("SIGKILL")));
  };
  const restart = (i: number) => void (servers[i] = start(i));
  const stop = async () => {
    await Promise.all(servers.map((_, i) => kill(i)));
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const nc = await connect({ servers: urls, timeout: 1000 });
      try {
        await (await jetstreamManager(nc, { timeout: 1000 })).getAccountInfo();
        return { urls, kill, restart, stop };
      } finally {
        await nc.close();
      }
    } catch (error) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`the NATS cluster did not answer within ${timeoutMs} ms: ${String(error)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
