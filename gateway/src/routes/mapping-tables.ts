import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { catalogueV1, toRestJson } from "@analytics/contracts";
import { route, type RouteContext } from "../pipeline/route";
import { answerRevision } from "../http/conditional";
import { generalResponseSchema } from "../http/schemas";
import { dataVersionOf, type CallAs } from "../clients";
import { mappingTableSchema, mappingType, mappingValues } from "./catalogue-schemas";

const { MappingTableSchema } = catalogueV1;
const toRest = (t?: catalogueV1.MappingTable) => toRestJson(MappingTableSchema, t!);
const field = { mappingField: z.string().min(1).max(500) };
const requiredType = { mappingType: mappingType.describe("required") };
/**
 * Values of one write: a table maps a whole catalogue's keys at most (a body of 100,000 values is
 * ~3 MiB), where any other object of a body takes MAX_JSON_OBJECT_KEYS.
 */
export const MAX_MAPPING_VALUES = 100_000;

/** What the mapping-table routes register with and call. */
interface Deps {
  ctx: RouteContext;
  catalogue: Client<typeof catalogueV1.CatalogueService>;
  as: CallAs;
}

const tag = "Mapping tables";
const notFound = { description: "mapping table not found", schema: generalResponseSchema };
const badRequest = { description: "invalid or missing mapping type, or bad body", schema: generalResponseSchema };

/** /v2/api/mappingtables -> analytics.catalogue.v1.CatalogueService */
export function mappingTableRoutes(ctx: RouteContext, catalogue: Client<typeof catalogueV1.CatalogueService>, as: CallAs): void {
  const deps: Deps = { ctx, catalogue, as };
  listMappingTables(deps);
  getMappingTable(deps);
  replaceMappingTable(deps);
  createMappingTable(deps);
  deleteMappingTable(deps);
}

function listMappingTables({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/mappingtables",
    operationId: "listMappingTables",
    summary: "List mapping tables",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { catalogue }),
    query: { mappingType: mappingType.optional() },
    responses: { 200: { description: "tables", schema: z.array(mappingTableSchema) }, 400: badRequest },
    handler: async ({ query, caller }) =>
      (await catalogue.listMappingTables({ mappingType: query.mappingType }, as(caller))).mappingTables.map((t) => toRest(t)),
  });
}

function getMappingTable({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/mappingtables/:mappingField",
    operationId: "getMappingTable",
    summary: "One mapping table",
    tag,
    auth: "bearer",
    params: field,
    query: requiredType,
    responses: { 200: { description: "the table", schema: mappingTableSchema }, 400: badRequest, 404: notFound },
    handler: async ({ params, query, caller }, _req, reply) =>
      toRest(answerRevision(reply, await catalogue.getMappingTable({ mappingField: params.mappingField, mappingType: query.mappingType }, as(caller))).mappingTable),
  });
}

function replaceMappingTable({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "PUT",
    url: "/v2/api/mappingtables/:mappingField",
    operationId: "replaceMappingTable",
    summary: "Add or update keys; keys absent from the request are kept",
    tag,
    auth: "bearer",
    params: field,
    query: requiredType,
    body: z.strictObject({ mappingValues }),
    maxObjectKeys: MAX_MAPPING_VALUES,
    responses: { 200: { description: "the table", schema: mappingTableSchema }, 400: badRequest, 404: notFound },
    handler: async ({ params, query, body, caller, ifRevision }) =>
      toRest(
        (await catalogue.mergeMappingTable({ mappingField: params.mappingField, mappingType: query.mappingType, mappingValues: body.mappingValues, ifRevision }, as(caller)))
          .mappingTable,
      ),
  });
}

function createMappingTable({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/mappingtables/:mappingField",
    operationId: "createMappingTable",
    summary: "Create the table or replace all its values (the type travels in the body)",
    tag,
    auth: "bearer",
    params: field,
    body: z.strictObject({ mappingType, mappingValues }),
    maxObjectKeys: MAX_MAPPING_VALUES,
    responses: { 200: { description: "the table", schema: mappingTableSchema }, 400: badRequest },
    handler: async ({ params, body, caller }) =>
      toRest((await catalogue.upsertMappingTable({ mappingField: params.mappingField, ...body }, as(caller))).mappingTable),
  });
}

function deleteMappingTable({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "DELETE",
    url: "/v2/api/mappingtables/:mappingField",
    operationId: "deleteMappingTable",
    summary: "Delete a mapping table",
    tag,
    auth: "bearer",
    params: field,
    query: requiredType,
    responses: { 204: { description: "deleted" }, 400: badRequest, 404: notFound },
    handler: async ({ params, query, caller, ifRevision }, _req, reply) => {
      await catalogue.deleteMappingTable({ mappingField: params.mappingField, mappingType: query.mappingType, ifRevision }, as(caller));
      return reply.status(204).send();
    },
  });
}
