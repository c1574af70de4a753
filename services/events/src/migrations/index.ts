import type { Migration } from "@analytics/db";
import { inboxMigrations } from "@analytics/inbox";
import { outboxMigrations } from "@analytics/outbox";
import { createEvents } from "./001_events";

export const migrations: Migration[] = [...outboxMigrations, ...inboxMigrations, createEvents];
