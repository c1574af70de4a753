import { topics } from "@analytics/contracts";
import { dispatch, on, type ConsumerDefinition } from "@analytics/rpc";
import * as repo from "./repository";

const settingsOf = dispatch(
  on(topics.accountSettingsChanged, (d) => ({ account_id: d.message.accountId, version: Number(d.message.version), custom_price_fields: d.message.customPriceFields })),
);

/**
 * The replica of each account's settings that pricing acts on (custom price fields), fed by
 * analytics.accounts.settings.changed; a message not newer than the stored version is ignored.
 */
export const settingsConsumer: ConsumerDefinition = {
  name: "settings",
  topics: settingsOf.topics,
  handle: async (tx, deliveries) => {
    const rows = deliveries.flatMap((d) => settingsOf(d) ?? []);
    if (!rows.length) return;
    // Newest per account first, so one statement never touches an account twice.
    const newest = new Map<string, (typeof rows)[number]>();
    for (const r of rows) if (!newest.has(r.account_id) || newest.get(r.account_id)!.version < r.version) newest.set(r.account_id, r);
    await repo.storeNewerAccountSettings(tx, [...newest.values()]);
  },
};
