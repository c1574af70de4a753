import type { ConnectRouter } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import { eventsV1 } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import type { Db } from "@analytics/db";
import { invalid } from "@analytics/errors";
import { pageOf } from "@analytics/rpc";
import * as events from "./events";
import { accountVersion, type EventRow, type EventState, type ProcessedState } from "./repository";

const { EventsService, EventSchema, EventState: State } = eventsV1;

const stateNames: Record<number, EventState | undefined> = {
  [State.PENDING]: "pending",
  [State.COMPLETED]: "completed",
  [State.FAILED]: "failed",
};

function processedState(state: eventsV1.EventState, path: string): ProcessedState {
  const name = stateNames[state];
  if (name === "completed" || name === "failed") return name;
  throw invalid("status must be completed or failed", [{ path, message: "must be completed or failed" }]);
}

export function toProto(row: EventRow): eventsV1.Event {
  return create(EventSchema, {
    id: row.id,
    accountId: row.account_id,
    eventType: row.event_type,
    payloadJson: row.payload,
    createdAt: timestampFromDate(row.created_at),
    completedAt: row.completed_at ? timestampFromDate(row.completed_at) : undefined,
    failedAt: row.failed_at ? timestampFromDate(row.failed_at) : undefined,
  });
}

/** Thin Connect handlers: proto in, plain function, proto out. */
export function eventsRoutes(db: Db) {
  return (router: ConnectRouter) =>
    router.service(EventsService, {
      async getAccountVersion(_req, ctx) {
        return { version: await accountVersion(db, callerOf(ctx).accountId) };
      },
      async listEvents(req, ctx) {
        const { accountId } = callerOf(ctx);
        const { rows, total } = await events.listEvents(
          db,
          { accountId, eventType: req.eventType, state: stateNames[req.state] },
          pageOf(req.page),
        );
        return { events: rows.map(toProto), totalCount: BigInt(total) };
      },
      async updateEventStatus(req, ctx) {
        await events.processEvent(db, callerOf(ctx).accountId, req.id, processedState(req.state, "status"));
        return { id: req.id, updated: true };
      },
      async batchUpdateEventStatus(req, ctx) {
        const items = req.items.map((i, n) => ({ id: i.id, state: processedState(i.state, `[${n}].status`) }));
        return { results: await events.processEvents(db, callerOf(ctx).accountId, items) };
      },
      async updateEventPayload(req, ctx) {
        const row = await events.replacePayload(db, callerOf(ctx).accountId, req.id, req.payloadJson);
        return { event: toProto(row) };
      },
    });
}
