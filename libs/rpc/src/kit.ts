import type { DescMessage } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { PageRequest, Topic } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import { accountVersion, inTransaction, type Db, type Tx } from "@analytics/db";
import { changed, invalid, notFound, type DomainError, type FieldViolation } from "@analytics/errors";
import type { Delivery } from "./consumers";

/**
 * What every service's handlers and writes share: paging, a batch item's answer, the refusal of a
 * reference named twice in one request, the revision check of a conditional write (If-Match), the
 * commit that wakes the outbox relay, and consumers that read each topic's message as its own type.
 */

/** One page of a list: 1-based page number and its size. */
export interface Page {
  page: number;
  pageSize: number;
}

/** The contract's largest page of a list (CONTRACT.md, Limits). */
export const MAX_PAGE_SIZE = 1000;

/** Defaults of the contract (page 1, 10 a page); out of range is invalid, never clamped. */
export function pageOf(page: PageRequest | undefined, maxPageSize = MAX_PAGE_SIZE): Page {
  const p = { page: page?.page || 1, pageSize: page?.pageSize || 10 };
  if (p.page < 1) throw invalid("page must be at least 1", [{ path: "page", message: "must be at least 1" }]);
  if (p.pageSize < 1 || p.pageSize > maxPageSize) {
    throw invalid(`pageSize must be 1..${maxPageSize}`, [{ path: "pageSize", message: `must be 1..${maxPageSize}` }]);
  }
  return p;
}

/** One item's answer: the contract's BatchResponse, the field problems of a 400, and what was written. */
export interface ItemOutcome<T = never> {
  statusCode: number;
  message: string;
  reference: string;
  referenceField: string;
  violations: FieldViolation[];
  value?: T;
}

export function itemOutcome(statusCode: number, reference: string, referenceField: string, message: string, violations: FieldViolation[] = []): ItemOutcome {
  return { statusCode, message, reference, referenceField, violations };
}

/** The contract's BatchResponse of an item. */
export const batchResponse = ({ statusCode, message, reference, referenceField }: ItemOutcome<unknown>) => ({ statusCode, message, reference, referenceField });

type BatchResult<T, K extends string> = { result: ReturnType<typeof batchResponse>; violations: FieldViolation[] } & { [P in K]?: T };

/** An item on the wire: its BatchResponse, its field problems and, under `field` when named, what was written. */
export function batchResult<T, K extends string = never>(o: ItemOutcome<T>, field?: K): BatchResult<T, K> {
  const result = { result: batchResponse(o), violations: o.violations };
  return (field === undefined ? result : { ...result, [field]: o.value }) as BatchResult<T, K>;
}

/**
 * The same reference twice in one request (an externalId, a key, ...): each item after the first to
 * name one of its references gets `refusal(item, i, earlier)`, `earlier` the index of that first.
 * An item answered already (`answers[i]` set: refused for another reason) names nothing; any other
 * item's references count, a refused repeat's too. How a repeat is refused is each endpoint's (a
 * batch item's 409, a 400 naming the field, or a throw that refuses the whole request).
 */
export function refuseDuplicates<I, A>(
  items: readonly I[],
  answers: (A | undefined)[],
  referencesOf: (item: I, i: number) => string | readonly string[],
  refusal: (item: I, i: number, earlier: number) => A,
): void {
  const firstNamedBy = new Map<string, number>();
  items.forEach((item, i) => {
    if (answers[i] !== undefined) return;
    const references = referencesOf(item, i);
    const named = typeof references === "string" ? [references] : references;
    const earlier = named.map((r) => firstNamedBy.get(r)).find((e) => e !== undefined);
    for (const r of named) if (!firstNamedBy.has(r)) firstNamedBy.set(r, i);
    if (earlier !== undefined) answers[i] = refusal(item, i, earlier);
  });
}

/**
 * If-Match on a write of one row (CONTRACT "Conditional requests"): `ifRevision` is the revision
 * the client read, `row` the row as the write found it under its lock (with its revision, libs/db
 * REVISION_COLUMN). A row at another revision, or gone meanwhile (that is not the revision named
 * either), is a 412 (`changed`); no row and no revision named is a 404. Here, not in libs/db: it is
 * the answer a write gives, next to the other answers every service shares; the SQL is libs/db's.
 */
export function atRevision<T extends { revision: string }>(what: string, row: T | undefined, ifRevision: string | undefined): T {
  if (!row || (ifRevision !== undefined && row.revision !== ifRevision)) throw notWritten(what, ifRevision);
  return row;
}

/**
 * atRevision's answer for a write that found no row to change: one whose statement was conditional
 * on the revision itself, or checked with libs/db lockedAtRevision before its work.
 */
export function notWritten(what: string, ifRevision: string | undefined): DomainError {
  return ifRevision === undefined ? notFound(`${what} not found`) : changed(`${what} changed since the revision the request named`);
}

/**
 * Commits `work` (run again on a deadlock or serialization failure) and then wakes the outbox
 * relay, when `announced` says the result wrote outbox rows (by default, always). It takes the
 * two parts of a ServiceContext it uses (index.ts re-exports this file: no import back).
 */
export async function commit<T>(ctx: { db: Db; relay: { kick(): void } }, work: (tx: Tx) => Promise<T>, announced: (result: T) => boolean = () => true): Promise<T> {
  const result = await inTransaction(ctx.db, work);
  if (announced(result)) ctx.relay.kick();
  return result;
}

/** What a consumer makes of the deliveries of some topics, each read as its topic's message type. */
export interface Route<R, C = void> {
  topics: readonly Topic[];
  take(delivery: Delivery, context: C): R;
}

export function on<D extends DescMessage, R, C = void>(topics: Topic<D> | readonly Topic<D>[], take: (delivery: Delivery<D>, context: C) => R): Route<R, C> {
  // A delivery reaches `take` only through dispatch, by its subject: its message is its topic's.
  return { topics: Array.isArray(topics) ? topics : [topics as Topic<D>], take: take as Route<R, C>["take"] };
}

/** A delivery's route by subject (undefined when none takes it), and every topic the routes take. */
export interface Dispatch<R, C = void> {
  (delivery: Delivery, context: C): R | undefined;
  topics: Topic[];
}

/** A topic -> handler map in place of if/else chains: each delivery goes to the route of its subject. */
export function dispatch<R, C = void>(...routes: Route<R, C>[]): Dispatch<R, C> {
  const bySubject = new Map<string, Route<R, C>>();
  for (const route of routes) {
    for (const t of route.topics) {
      if (bySubject.has(t.subject)) throw new Error(`two routes for ${t.subject}`);
      bySubject.set(t.subject, route);
    }
  }
  const route = (delivery: Delivery, context: C) => bySubject.get(delivery.subject)?.take(delivery, context);
  return Object.assign(route, { topics: routes.flatMap((r) => [...r.topics]) });
}

/**
 * GetAccountVersion of a service whose schema has account_versions (libs/db createAccountVersions):
 * the caller's data version, the gateway's weak ETag on that service's lists. Every service
 * registers this one handler, so each answers it the same way.
 */
export function accountVersionHandler(db: Db) {
  return async (_req: unknown, ctx: HandlerContext): Promise<{ version: bigint }> => ({ version: await accountVersion(db, callerOf(ctx).accountId) });
}

/** The same version as text: a ServiceDefinition's dataVersion, answered with the lists' calls that ask for it (data-version.ts). */
export async function accountVersionText(db: Db, accountId: string): Promise<string> {
  return String(await accountVersion(db, accountId));
}
