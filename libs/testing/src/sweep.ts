import pg from "pg";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { createdAt, testDatabaseUrl, testNatsUrl } from "./names";

/**
 * Drops test databases and JetStream streams that runs killed half-way left behind (older than
 * `maxAgeMs`), so a long-lived CI machine does not fill up.
 */
export async function sweepStaleTestResources(maxAgeMs = 3_600_000): Promise<void> {
  const stale = (name: string) => {
    const at = createdAt(name);
    return at !== undefined && at < Date.now() - maxAgeMs;
  };
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>("select datname from pg_database where datname like 't\\_%'");
    for (const { datname } of rows.filter((r) => stale(r.datname))) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  const nc = await connect({ servers: testNatsUrl() });
  try {
    const jsm = await jetstreamManager(nc);
    for await (const name of jsm.streams.names()) if (/^(T|E2E)_/.test(name) && stale(name)) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}
