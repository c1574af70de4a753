import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { databaseAndStreamForFile, databaseExists, testNatsUrl } from "../src";

async function streamExists(name: string): Promise<boolean> {
  const nc = await connect({ servers: testNatsUrl() });
  try {
    return await (await jetstreamManager(nc)).streams.info(name).then(() => true, () => false);
  } finally {
    await nc.close();
  }
}

// Two describe blocks in order: jest runs the first one's afterAll before the second one's tests.
const seen: { name?: string; closed: string[]; existedAtClose: boolean[]; pool?: unknown; streamName?: string } = { closed: [], existedAtClose: [] };

describe("databaseAndStreamForFile: while the file runs", () => {
  const perFile = databaseAndStreamForFile();
  const db = perFile.openDb("things");
  perFile.atClose(async () => {
    seen.closed.push("first");
    seen.existedAtClose.push(await databaseExists(perFile.name));
  });
  perFile.atClose(async () => {
    seen.closed.push("second");
    seen.existedAtClose.push(await databaseExists(perFile.name));
  });

  it("has the database, a pool on it and a stream of its own", async () => {
    seen.name = perFile.name;
    seen.pool = db;
    seen.streamName = perFile.stream.stream;
    expect((await db.raw("select current_database() as name")).rows[0].name).toBe(perFile.name);
    expect(perFile.url).toContain(`/${perFile.name}`);
    expect(await streamExists(perFile.stream.stream)).toBe(true);
  });
});

describe("databaseAndStreamForFile: after afterAll", () => {
  it("ran the atClose work latest first while the database still existed, then destroyed the pools, deleted the stream and dropped the database", async () => {
    expect(seen.closed).toEqual(["second", "first"]);
    expect(seen.existedAtClose).toEqual([true, true]);
    // knex leaves no pool behind once destroyed.
    expect((seen.pool as { client: { pool?: unknown } }).client.pool).toBeFalsy();
    expect(await streamExists(seen.streamName!)).toBe(false);
    expect(await databaseExists(seen.name!)).toBe(false);
  });
});
