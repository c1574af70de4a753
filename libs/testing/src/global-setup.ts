import net from "node:net";
import { existsSync } from "node:fs";

/**
 * Jest global setup: tests use the Postgres and NATS given by TEST_DATABASE_URL / TEST_NATS_URL or
 * the machine's local services. Only when neither answers and a Docker engine does, testcontainers
 * starts them for the run.
 */
export default async function globalSetup(): Promise<void> {
  const pgUp = await reachable(process.env.TEST_DATABASE_URL || "postgres://127.0.0.1:5432", 5432);
  const natsUp = await reachable(process.env.TEST_NATS_URL || "nats://127.0.0.1:4222", 4222);
  if (pgUp && natsUp) {
    const { sweepStaleTestResources } = await import("./sweep");
    await sweepStaleTestResources();
    return;
  }
  if (!dockerAnswers()) {
    throw new Error(
      `tests need Postgres (${pgUp ? "up" : "down"}) and NATS JetStream (${natsUp ? "up" : "down"}): ` +
        "set TEST_DATABASE_URL / TEST_NATS_URL or start the local services (see README)",
    );
  }
  const { GenericContainer, Wait } = await import("testcontainers");
  const containers: { stop(): Promise<unknown> }[] = [];
  if (!pgUp) {
    const c = await new GenericContainer("postgres:16-alpine")
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    process.env.TEST_DATABASE_URL = `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`;
    containers.push(c);
  }
  if (!natsUp) {
    const c = await new GenericContainer("nats:2").withCommand(["-js"]).withExposedPorts(4222).start();
    process.env.TEST_NATS_URL = `nats://${c.getHost()}:${c.getMappedPort(4222)}`;
    containers.push(c);
  }
  (globalThis as { __containers?: typeof containers }).__containers = containers;
}

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname || "127.0.0.1", port: Number(u.port) || defaultPort });
    socket.setTimeout(1000);
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => (socket.destroy(), resolve(false)));
  });
}

function dockerAnswers(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync("/var/run/docker.sock");
}
