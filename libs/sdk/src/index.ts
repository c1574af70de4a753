/** The Analytics platform's SDK: typed methods per operation over a runtime that makes calls correct by default. */
export { Client, Paged, nextLink, retryAfterMs, type ClientOptions, type Page, type RequestOptions, type Spec, type Upload } from "./core/client";
export * from "./core/errors";
export { eventQueue, type QueueOptions } from "./core/queue";
export { followImport, importEnded, importFile, importResults, type ImportOptions } from "./core/imports";
export * from "./generated/index";
