import type { Migration } from "@analytics/db";

/**
 * Transactions keep their items and statements as proto JSON (decimals as exact text); shipments
 * have their own rows, and a shipment post locks its transaction's row, so concurrent posts for
 * one item are checked one after the other against its quantity.
 */
export const createTransactions: Migration = {
  name: "003_transactions",
  async up(db) {
    await db.raw(`
      CREATE TABLE transactions (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        external_transaction_id text NOT NULL,
        body jsonb NOT NULL,
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, external_transaction_id)
      )`);
    await db.raw("CREATE INDEX transactions_account_seq_id ON transactions (account_id, seq) INCLUDE (id)");
    await db.raw(`
      CREATE TABLE shipments (
        seq bigserial PRIMARY KEY,
        account_id uuid NOT NULL,
        transaction_id uuid NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
        external_item_id text NOT NULL,
        body jsonb NOT NULL,
        quantity integer NOT NULL CHECK (quantity > 0)
      )`);
    await db.raw("CREATE INDEX shipments_item ON shipments (transaction_id, external_item_id)");
  },
};
