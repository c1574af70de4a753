import knex, { type Knex } from "knex";
import pg from "pg";

export type Db = Knex;
export type Tx = Knex.Transaction;

// bigint counts come back as JS numbers (the edge keeps them within 2^53); numeric (money,
// prices, rates) comes back as its exact decimal text, never a binary float.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface DbOptions {
  url: string;
  /** The Postgres schema the service owns; it is the search path, so queries name bare tables. */
  schema: string;
  poolMax?: number;
  applicationName?: string;
}

export function createDb({ url, schema, poolMax = 10, applicationName = schema }: DbOptions): Db {
  assertIdentifier(schema);
  return knex({
    client: "pg",
    connection: { connectionString: url, application_name: applicationName },
    searchPath: [schema],
    pool: { min: 0, max: poolMax },
  });
}

/** A migration of one service; names sort in the order they run. */
export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down?(db: Knex): Promise<void>;
}

/**
 * Creates the service's schema and runs its pending migrations. Migrations are imported modules
 * (not files found at run time) so that the bundled service carries them.
 */
export async function migrate(db: Db, schema: string, migrations: Migration[]): Promise<string[]> {
  assertIdentifier(schema);
  await db.raw(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const byName = new Map(migrations.map((m) => [m.name, m]));
  const [, applied] = (await db.migrate.latest({
    schemaName: schema,
    tableName: "knex_migrations",
    migrationSource: {
      getMigrations: async () => [...byName.keys()].sort(),
      getMigrationName: (name: string) => name,
      getMigration: async (name: string) => {
        const m = byName.get(name)!;
        return { up: m.up, down: m.down ?? (async () => undefined) };
      },
    },
  })) as [number, string[]];
  return applied;
}

export function inTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(work);
}

export async function ping(db: Db): Promise<void> {
  await db.raw("select 1");
}

function assertIdentifier(name: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain schema name: ${name}`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A client's id that is not a UUID names nothing: callers answer 404 instead of a cast error. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Limit/offset of a 1-based page. */
export function pageWindow(page: { page: number; pageSize: number }): { limit: number; offset: number } {
  return { limit: page.pageSize, offset: (page.page - 1) * page.pageSize };
}
