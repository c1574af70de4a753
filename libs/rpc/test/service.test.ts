import net from "node:net";
import pino from "pino";
import { Registry } from "prom-client";
import { InProcessBus } from "@analytics/bus";
import { topics } from "@analytics/contracts";
import { createDb, migrate, migrateOnly, pendingMigrations } from "@analytics/db";
import { inboxMigrations } from "@analytics/inbox";
import { outboxMigrations } from "@analytics/outbox";
import { busMessage, databaseForFile, eventually } from "@analytics/testing";
import { startService, type ConsumerDefinition, type RunningService, type ServiceDefinition } from "../src";

describe("startService (real Postgres)", () => {
  const database = databaseForFile();

  const handled: string[] = [];
  const consumer: ConsumerDefinition = {
    name: "probe",
    topics: [topics.catalogueBrandCreated],
    handle: async (_tx, deliveries) => void handled.push(...deliveries.map((d) => d.id)),
  };
  const definition: ServiceDefinition = { name: "probe", migrations: [...outboxMigrations, ...inboxMigrations], routes: () => undefined, consumers: [consumer] };
  const deps = (bus: InProcessBus, port: number, healthPort?: number) => ({
    databaseUrl: database.url,
    bus,
    logger: pino({ level: "silent" }),
    internalToken: "x".repeat(40),
    port,
    healthPort,
  });
  const brand = (id: string) => busMessage(topics.catalogueBrandCreated, "00000000-0000-4000-8000-000000000001", `brand:${id}`, {}, id);

  it("answers /healthz (dependencies), /readyz (its own database) and /metrics over plain HTTP/1.1 on its health port", async () => {
    const bus = new InProcessBus();
    const service = await startService(definition, deps(bus, 0, 0));
    try {
      const ready = await fetch(`${service.healthUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await (await fetch(`${service.healthUrl}/healthz`)).json()).toEqual({ status: "ok", checks: { database: true, bus: true } });
      const metrics = await (await fetch(`${service.healthUrl}/metrics`)).text();
      for (const series of [
        'outbox_dead_lettered_total{deployable="probe"} 0',
        'outbox_pending_messages{deployable="probe"} 0',
        'db_pool_max_connections{deployable="probe"} 10',
        'consumer_pending_messages{consumer="probe-probe",deployable="probe"} 0',
      ]) {
        expect(metrics).toContain(series);
      }
      // The bus gone: still ready (writes commit, their messages wait in the outbox), and /healthz says so.
      await bus.close();
      expect((await fetch(`${service.healthUrl}/readyz`)).status).toBe(200);
      const health = await fetch(`${service.healthUrl}/healthz`);
      expect([health.status, await health.json()]).toEqual([200, { status: "ok", checks: { database: true, bus: false } }]);
    } finally {
      await service.close();
    }
  });

  it("renders /metrics once for 32 scrapers at once on its health port", async () => {
    const service = await startService(definition, deps(new InProcessBus(), 0, 0));
    const renders = jest.spyOn(Registry.prototype, "metrics");
    try {
      const answers = await Promise.all(Array.from({ length: 32 }, () => fetch(`${service.healthUrl}/metrics`).then((r) => r.text())));
      // One render serves every scraper; a machine stalled over a second between arrivals may render
      // again, never once per scraper (32 without the sharing).
      expect(renders.mock.calls.length).toBeLessThanOrEqual(3);
      expect(new Set(answers).size).toBeLessThanOrEqual(renders.mock.calls.length);
    } finally {
      renders.mockRestore();
      await service.close();
    }
  });

  it("stops everything it started when its port cannot open", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", () => resolve()));
    const port = (taken.address() as net.AddressInfo).port;
    const bus = new InProcessBus();
    try {
      await expect(startService(definition, deps(bus, port))).rejects.toThrow(`port ${port} is already in use (SERVICE_PORT)`);
      // No consumer of the failed service is left on the bus: nothing handles a message.
      expect(await bus.publish([brand("00000000-0000-4000-8000-0000000000aa")])).toEqual([undefined]);
      expect(handled).toEqual([]);
    } finally {
      taken.close();
    }
  });

  it("consumes through the inbox once it runs", async () => {
    const bus = new InProcessBus();
    const service = await startService(definition, deps(bus, 0));
    try {
      const message = brand("00000000-0000-4000-8000-0000000000bb");
      await bus.publish([message]);
      await bus.publish([message]);
      expect(handled).toEqual([message.id]);
      const db = createDb({ url: database.url, schema: "probe" });
      expect(await db("inbox").where({ consumer: "probe-probe" })).toHaveLength(1);
      await db.destroy();
    } finally {
      await service.close();
    }
  });

  it("serves /metrics on its own port when given one (METRICS_PORT), and then not on its health port", async () => {
    const service = await startService(definition, { ...deps(new InProcessBus(), 0, 0), metricsPort: 0 });
    try {
      expect(await (await fetch(`${service.metricsUrl}/metrics`)).text()).toContain('outbox_pending_messages{deployable="probe"} 0');
      expect((await fetch(`${service.healthUrl}/metrics`)).status).toBe(404);
      expect((await fetch(`${service.healthUrl}/readyz`)).status).toBe(200);
      expect((await fetch(`${service.metricsUrl}/readyz`)).status).toBe(404);
    } finally {
      await service.close();
    }
  });

  it("MIGRATIONS=verify: migrates nothing and opens no port until its schema has every migration (the migration Job's), then serves", async () => {
    const waiting: string[][] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void waiting.push(JSON.parse(line).pending) });
    const verified: ServiceDefinition = { ...definition, name: "verified", consumers: [] };
    let started: RunningService | undefined;
    const starting = startService(verified, { ...deps(new InProcessBus(), 0, 0), logger, migrations: "verify" }).then((s) => (started = s));
    const db = createDb({ url: database.url, schema: "verified" });
    try {
      const names = verified.migrations.map((m) => m.name).sort();
      const logged = (expected: string[][]) => eventually(async () => JSON.stringify(waiting) === JSON.stringify(expected));
      await logged([names]);
      // It looked and made nothing: not even the schema.
      expect((await db.raw("SELECT to_regclass('verified.knex_migrations') AS t")).rows[0].t).toBeNull();
      await migrate(db, "verified", verified.migrations.slice(0, 1));
      await logged([names, names.filter((n) => n !== verified.migrations[0].name)]);
      expect(started).toBeUndefined();
      await migrate(db, "verified", verified.migrations);
      const service = await starting;
      expect((await fetch(`${service.healthUrl}/readyz`)).status).toBe(200);
    } finally {
      await db.destroy();
      await starting.then((s) => s.close());
    }
  });

  it("migrate-only (the migration Job): applies the schema's pending migrations and answers exit code 0; 1 when it cannot", async () => {
    const logger = pino({ level: "silent" });
    const migrations = definition.migrations;
    expect(await migrateOnly({ url: database.url }, "jobbed", migrations, logger)).toBe(0);
    const db = createDb({ url: database.url, schema: "jobbed" });
    try {
      expect(await pendingMigrations(db, "jobbed", migrations)).toEqual([]);
    } finally {
      await db.destroy();
    }
    const missing = new URL(database.url);
    missing.pathname = "/no_such_database_for_migrate_only";
    expect(await migrateOnly({ url: missing.toString() }, "jobbed", migrations, logger)).toBe(1);
  });
});
