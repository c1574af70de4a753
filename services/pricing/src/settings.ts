import { topics } from "@analytics/contracts";
import type { Tx } from "@analytics/db";
import { isTopic, type ConsumerDefinition } from "@analytics/rpc";

/**
 * The replica of each account's settings that pricing acts on (custom price fields), fed by
 * analytics.accounts.settings.changed; a message not newer than the stored version is ignored.
 */
export const settingsConsumer: ConsumerDefinition = {
  name: "settings",
  topics: [topics.accountSettingsChanged],
  handle: async (tx: Tx, deliveries) => {
    const rows = deliveries.flatMap((d) =>
      isTopic(d, topics.accountSettingsChanged)
        ? [{ account_id: d.message.accountId, version: Number(d.message.version), custom_price_fields: d.message.customPriceFields }]
        : [],
    );
    if (!rows.length) return;
    // Newest per account first, so one statement never touches an account twice.
    const newest = new Map<string, (typeof rows)[number]>();
    for (const r of rows) if (!newest.has(r.account_id) || newest.get(r.account_id)!.version < r.version) newest.set(r.account_id, r);
    await tx.raw(
      `INSERT INTO account_settings (account_id, version, custom_price_fields)
       SELECT account_id, version, ARRAY(SELECT jsonb_array_elements_text(custom_price_fields))
       FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, version bigint, custom_price_fields jsonb)
       ON CONFLICT (account_id) DO UPDATE SET version = excluded.version, custom_price_fields = excluded.custom_price_fields
       WHERE account_settings.version < excluded.version`,
      [JSON.stringify([...newest.values()])],
    );
  },
};
