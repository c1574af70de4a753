import type { Migration } from "@analytics/db";
import { inboxMigrations } from "@analytics/inbox";
import { outboxMigrations } from "@analytics/outbox";
import { createReplica } from "./001_planning";

export const migrations: Migration[] = [...outboxMigrations, ...inboxMigrations, createReplica];
