import type { Migration } from "@analytics/db";
import { outboxMigration } from "@analytics/outbox";
import { createCatalogue } from "./001_catalogue";

export const migrations: Migration[] = [outboxMigration, createCatalogue];
