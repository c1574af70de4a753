import { BUMP_ACCOUNT_VERSIONS_FUNCTION, migrate, type Db, type Tx } from "@analytics/db";
import { databaseForFile } from "@analytics/testing";
import { migrations } from "../src/migrations";
import { webhookRoundFunctions } from "../src/sql/webhook-rounds";

/**
 * Every function of the events schema has, after all migrations, exactly the text of its one home
 * (src/sql/webhook-rounds.ts, libs/db's account-versions.ts): made again from those files alone,
 * in a transaction rolled back, the schema holds the same functions with the same definitions.
 */
describe("the events schema's SQL functions", () => {
  const database = databaseForFile();
  const homes = [BUMP_ACCOUNT_VERSIONS_FUNCTION, ...webhookRoundFunctions];

  const functions = async (db: Db | Tx): Promise<{ signature: string; definition: string }[]> =>
    (
      await db.raw(
        `SELECT p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'events' ORDER BY 1`,
      )
    ).rows;

  it("are the text of their files, and no other", async () => {
    const db = database.openDb("events");
    await migrate(db, "events", migrations);
    const migrated = await functions(db);
    expect(migrated.map((f) => f.signature)).toEqual([
      "bump_account_versions()",
      "webhook_claim_due(integer,integer,bigint,uuid,uuid[],integer[])",
      "webhook_record_attempts(jsonb,integer)",
      "webhook_round(jsonb,integer,integer,integer,bigint,uuid,uuid[],integer[])",
    ]);
    const tx = await db.transaction();
    let fromFiles;
    try {
      const { rows } = await tx.raw("SELECT p.oid::regprocedure::text AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'events'");
      // CASCADE takes the triggers too; the rollback brings everything back.
      for (const { signature } of rows) await tx.raw(`DROP FUNCTION ${signature} CASCADE`);
      for (const text of homes) await tx.raw(text);
      fromFiles = await functions(tx);
    } finally {
      await tx.rollback();
    }
    expect(fromFiles).toEqual(migrated);
  });
});
