import { catalogueV1, restValues, topics, type catalogueMessagesV1, type Topic } from "@analytics/contracts";
import { jsonProblems, type Db, type Tx } from "@analytics/db";
import { invalid, notFound } from "@analytics/errors";
import { enqueue, outboxEntry } from "@analytics/outbox";
import { commit, notWritten, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import type { MappingTableId } from "./repository";
import type { MappingTableRow } from "./resources";
import { mappingTableFromRow } from "./resources";
import { checkText, MAX_KEY_LENGTH } from "./validation";

/** Mapping tables: key-to-value sets per (account, mappingField, mappingType). */

/** The MappingType enum's REST names (proto/catalogue/v1/catalogue.proto). */
const MAPPING_TYPES = restValues(catalogueV1.MappingTableSchema.field.mappingType) ?? [];

function checkType(mappingType: string): string {
  if (MAPPING_TYPES.includes(mappingType)) return mappingType;
  const message = `must be one of ${MAPPING_TYPES.join(", ")}`;
  throw invalid(`mappingType ${message}`, [{ path: "mappingType", message }]);
}

function tableId(accountId: string, mappingType: string, mappingField: string): MappingTableId {
  if (!mappingField.trim()) throw invalid("mappingField is required", [{ path: "mappingField", message: "is required" }]);
  checkText("mappingField", mappingField, MAX_KEY_LENGTH);
  return { accountId, mappingType: checkType(mappingType), mappingField };
}

function checkValues(values: Record<string, string>): Record<string, string> {
  const problems = jsonProblems(values, "mappingValues");
  if (problems.length) throw invalid("mappingValues cannot be stored", problems);
  return values;
}

const missing = (id: MappingTableId) => notFound(`mapping table ${id.mappingField} of type ${id.mappingType} not found`);

/**
 * Commits a change of one table with its message `analytics.catalogue.mapping_table.<verb>`; a
 * write that left the table as it was (`changed` false) announces nothing. `ifRevision` (If-Match):
 * the revision the client read, checked under the row's lock before the work.
 */
function change<T extends MappingTableRow & { changed?: boolean }>(
  ctx: ServiceContext,
  id: MappingTableId,
  work: (tx: Tx) => Promise<T | undefined>,
  topic: (row: T) => Topic<typeof catalogueMessagesV1.MappingTableChangedSchema>,
  ifRevision?: string,
) {
  return commit(ctx, async (tx) => {
    if (!(await repo.lockMappingTableAt(tx, id, ifRevision))) throw notWritten(`mapping table ${id.mappingField} of type ${id.mappingType}`, ifRevision);
    const row = await work(tx);
    if (!row) throw missing(id);
    if (row.changed === false) return row;
    const t = topic(row);
    const mappingTable = t === topics.catalogueMappingTableDeleted ? undefined : mappingTableFromRow(row);
    const message = { accountId: id.accountId, mappingType: id.mappingType, mappingField: id.mappingField, mappingTable };
    await enqueue(tx, [outboxEntry(t, id.accountId, `${id.mappingType}/${id.mappingField}`, message)]);
    return row;
  });
}

export function listMappingTables(db: Db, accountId: string, mappingType?: string) {
  return repo.listMappingTables(db, accountId, mappingType === undefined ? undefined : checkType(mappingType));
}

export async function getMappingTable(db: Db, accountId: string, mappingType: string, mappingField: string) {
  const id = tableId(accountId, mappingType, mappingField);
  const row = await repo.findMappingTable(db, id);
  if (!row) throw missing(id);
  return row;
}

/** PUT: adds or replaces the keys sent, keeps the others; NotFound when there is no such table. */
export function mergeMappingTable(ctx: ServiceContext, accountId: string, mappingType: string, mappingField: string, values: Record<string, string>, ifRevision?: string) {
  const id = tableId(accountId, mappingType, mappingField);
  checkValues(values);
  return change(ctx, id, (tx) => repo.mergeMappingTable(tx, id, values), () => topics.catalogueMappingTableUpdated, ifRevision);
}

/** POST: creates the table or replaces all its values. */
export function upsertMappingTable(ctx: ServiceContext, accountId: string, mappingType: string, mappingField: string, values: Record<string, string>) {
  const id = tableId(accountId, mappingType, mappingField);
  checkValues(values);
  return change(ctx, id, (tx) => repo.upsertMappingTable(tx, id, values), (row) => (row.created ? topics.catalogueMappingTableCreated : topics.catalogueMappingTableUpdated));
}

export async function deleteMappingTable(ctx: ServiceContext, accountId: string, mappingType: string, mappingField: string, ifRevision?: string): Promise<void> {
  const id = tableId(accountId, mappingType, mappingField);
  await change(ctx, id, (tx) => repo.deleteMappingTable(tx, id), () => topics.catalogueMappingTableDeleted, ifRevision);
}
