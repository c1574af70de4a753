/** Characters that make an RFC 4180 field quoted. */
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV field (RFC 4180): text quoted when it holds a comma, a double quote, CR or LF (its
 * quotes doubled), else as it is; null and undefined are an empty field.
 */
export function csvField(value: string | number | bigint | boolean | null | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value !== "string") return String(value);
  return NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One CSV record, CRLF-terminated (RFC 4180). */
export function csvLine(values: readonly (string | number | bigint | boolean | null | undefined)[]): string {
  return values.map(csvField).join(",") + "\r\n";
}

/** The Content-Type of a CSV answer with a header row (RFC 4180 section 3, UTF-8). */
export const CSV_CONTENT_TYPE = "text/csv; charset=utf-8; header=present";

/** Content-Disposition of a CSV answer: saved as `name`.csv rather than shown (a spreadsheet's download). */
export const csvAttachment = (name: string) => `attachment; filename="${name}.csv"`;
