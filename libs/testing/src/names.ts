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

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
}

/** When a uniqueName was made, if the name is one. */
export function createdAt(name: string): number | undefined {
  const match = /^[A-Za-z0-9]+_([0-9a-z]+)_[0-9a-f]{8}$/i.exec(name);
  return match ? parseInt(match[1].toLowerCase(), 36) : undefined;
}

