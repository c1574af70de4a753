import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Import } from "./gen/common/v1/imports_pb";

const date = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString() : null);

/**
 * The Import object as REST answers it (GET /v2/api/imports/{id}): the gateway's answers and the
 * data of an import.finished webhook delivery (the events service), one shape for both.
 */
export function importToRest(i: Import) {
  return {
    id: i.id,
    resource: i.resource,
    format: i.format,
    status: i.status,
    linesTotal: i.linesTotal === undefined ? null : Number(i.linesTotal),
    linesProcessed: Number(i.linesProcessed),
    linesSucceeded: Number(i.linesSucceeded),
    linesFailed: Number(i.linesFailed),
    createdAt: date(i.createdAt),
    startedAt: date(i.startedAt),
    finishedAt: date(i.finishedAt),
    resultsExpireAt: date(i.resultsExpireAt),
    message: i.message,
  };
}
