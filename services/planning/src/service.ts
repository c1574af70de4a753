import { createDb, DB_DEFAULTS, prepareSchema } from "@analytics/db";
import { startService, type ServiceDefinition, type ServiceDeps } from "@analytics/rpc";
import { planningRoutes } from "./handlers";
import { Admission, admissionLimits } from "./admission";
import { migrations } from "./migrations";
import { replicaConsumer } from "./replica";
import { accountVersion, compactChangedGroups, refreshTimezoneNames, replicaEpoch } from "./repository";

/**
 * The planning service: planned volumes answered from its own replica of SKUs, warehouses, stock,
 * purchase-order lines and account settings, fed only by bus messages (one durable consumer).
 */
export const planningService: ServiceDefinition = {
  name: "planning",
  migrations,
  routes: (router, { db }) => planningRoutes(db)(router),
  consumers: [replicaConsumer],
  prune: (db) => compactChangedGroups(db),
  // Answers change with the account-local date too (GetAccountVersion's `today`).
  dataVersion: async (db, accountId) => {
    const { version, today } = await accountVersion(db, accountId);
    return `${version}-${today}`;
  },
};

/**
 * Migrates first (or waits for the migration Job: MIGRATIONS=verify), to read the replica's epoch: the durable consumer is `planning-replica-<epoch>`,
 * so a new or wiped schema is a new consumer that replays the stream from its first message.
 */
export async function startPlanningService(deps: ServiceDeps) {
  const db = createDb({ url: deps.databaseUrl, schema: planningService.name, applicationName: "planning-migrate", ...deps.dbTimeouts });
  let epoch: string;
  try {
    await prepareSchema(db, planningService.name, migrations, deps.migrations, deps.logger);
    epoch = await replicaEpoch(db);
    await refreshTimezoneNames(db);
  } finally {
    await db.destroy();
  }
  const queryTimeoutMs = deps.dbTimeouts?.planningQueryTimeoutMs;
  // One per process: the streamed answers' share of this process's pool.
  const admission = new Admission(admissionLimits(deps.dbTimeouts?.poolMax ?? DB_DEFAULTS.poolMax, deps.dbTimeouts?.planningAccountMaxAnswers));
  return startService(
    { ...planningService, routes: (router, { db }) => planningRoutes(db, { queryTimeoutMs, admission })(router), consumers: [{ ...replicaConsumer, name: `${replicaConsumer.name}-${epoch}` }] },
    deps,
  );
}
