import type { Client, RequestOptions, Upload } from "./client";
import { Imports, type CreateImportQuery } from "../generated/imports";
import type { Import, ImportLineResult } from "../generated/schemas";

const FINAL = new Set<Import["status"]>(["completed", "completed_with_errors", "failed", "cancelled"]);

/** Whether a job has ended (nothing more will change). */
export const importEnded = (job: Import) => FINAL.has(job.status);

export interface ImportOptions extends RequestOptions {
  /** `text/csv` for a CSV file (products); NDJSON when absent. */
  contentType?: string;
  /** Called with the job after each read while it runs. */
  onProgress?: (job: Import) => void;
  /** The wait between reads of the job; 500 ms when absent. */
  pollMs?: number;
}

/**
 * Imports a file of `resource`'s batch items (any resource the API takes: POST /v2/api/imports?resource=)
 * and follows the job to its end. A stream is sent as it is read; a string, bytes or Blob can be retried.
 */
export async function importFile(client: Client, resource: CreateImportQuery["resource"], file: Upload, options: ImportOptions = {}): Promise<Import> {
  const { onProgress, pollMs, ...request } = options;
  const job = await new Imports(client).createImport(file, { resource }, request);
  return followImport(client, job, { onProgress, pollMs, signal: request.signal });
}

/** Reads the job until it has ended. */
export async function followImport(client: Client, job: Import, options: Pick<ImportOptions, "onProgress" | "pollMs" | "signal"> = {}): Promise<Import> {
  const imports = new Imports(client);
  for (;;) {
    options.onProgress?.(job);
    if (importEnded(job)) return job;
    await client.sleep(options.pollMs ?? 500, options.signal);
    job = await imports.getImport(job.id, { signal: options.signal });
  }
}

/** A job's per-line results, read as they stream (`failed` lines by default). */
export function importResults(client: Client, id: string, outcome: "failed" | "succeeded" | "all" = "failed"): AsyncIterable<ImportLineResult> {
  return new Imports(client).getImportResults(id, { outcome });
}
