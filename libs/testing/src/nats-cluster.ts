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
 * once JetStream answers on every server (a meta leader is elected, all are in the cluster). A
 * server that exits while starting (a port picked free was taken meanwhile) makes it start the
 * cluster again on other ports, up to 3 times.
 */
export async function startNatsCluster(size = 3, timeoutMs = 30_000): Promise<NatsCluster> {
  for (let attempt = 1; ; attempt++) {
    const cluster = await startOnce(size, timeoutMs);
    if (cluster !== "exited") return cluster;
    if (attempt === 3) throw new Error(`a nats-server exited while the cluster started, ${attempt} times`);
  }
}

async function startOnce(size: number, timeoutMs: number): Promise<NatsCluster | "exited"> {
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
    if (servers.some((s) => s.exitCode !== null || s.signalCode !== null)) {
      await stop();
      return "exited";
    }
    try {
      await Promise.all(urls.map(jetStreamAnswers));
      return { urls, kill, restart, stop };
    } catch (error) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`the NATS cluster did not answer within ${timeoutMs} ms: ${String(error)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Resolves when JetStream answers at `url` within a second, rejects otherwise. */
export async function jetStreamAnswers(url: string): Promise<true> {
  const nc = await connect({ servers: url, timeout: 1000 });
  try {
    await (await jetstreamManager(nc, { timeout: 1000 })).getAccountInfo();
    return true;
  } finally {
    await nc.close();
  }
}
