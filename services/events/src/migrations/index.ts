import type { Migration } from "@analytics/db";
import { inboxMigration } from "@analytics/inbox";
import { outboxMigration } from "@analytics/outbox";
import { createEvents } from "./001_events";

export const migrations: Migration[] = [outboxMigration, inboxMigration, createEvents];
