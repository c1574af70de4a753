import type { Migration } from "@analytics/db";
import { outboxMigrations } from "@analytics/outbox";
import { createInventory } from "./001_inventory";

export const migrations: Migration[] = [...outboxMigrations, createInventory];
