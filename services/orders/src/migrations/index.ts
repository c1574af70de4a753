import type { Migration } from "@analytics/db";
import { outboxMigrations } from "@analytics/outbox";
import { createOrders } from "./001_orders";

export const migrations: Migration[] = [...outboxMigrations, createOrders];
