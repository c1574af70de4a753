import type { Migration } from "@analytics/db";
import { createAccounts } from "./001_accounts";

export const migrations: Migration[] = [createAccounts];
