import { randomBytes } from "node:crypto";

// Plain helpers without path aliases: jest's global setup loads them outside the module mapper.

/** Postgres for tests: TEST_DATABASE_URL, default the machine's local server. */
export function testDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
}

/** NATS with JetStream for tests: TEST_NATS_URL, default the machine's local server. */
export function testNatsUrl(): string {
  return process.env.TEST_NATS_URL || "nats://127.0.0.1:4222";
}

/**
 * `prefix_<time>_<random>`, plus `_<run id>` inside a jest run (TEST_RUN_ID, set by the global
 * setup): the run's teardown finds every database and stream the run made by that suffix, and
 * never touches another run's.
 */
export function uniqueName(prefix: string): string {
  const run = process.env.TEST_RUN_ID;
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}${run ? `_${run}` : ""}`;
}

/** When a uniqueName was made, if the name is one. */
export function createdAt(name: string): number | undefined {
  const match = /^[A-Za-z0-9]+_([0-9a-z]+)_[0-9a-f]{8}(_[0-9a-f]+)?$/i.exec(name);
  return match ? parseInt(match[1].toLowerCase(), 36) : undefined;
}

/** Whether a uniqueName (database, stream; any letter case) was made by the run `runId`. */
export function madeByRun(name: string, runId: string): boolean {
  return createdAt(name) !== undefined && name.toLowerCase().endsWith(`_${runId.toLowerCase()}`);
}
