/** Characters that make an RFC 4180 field quoted. */
const NEEDS_QUOTES = /[",\r\n]/;

/** Text a spreadsheet would take for a formula (OWASP "CSV injection"): =, +, -, @, tab or CR first. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field (RFC 4180): text quoted when it holds a comma, a double quote, CR or LF (its
 * quotes doubled), else as it is; null and undefined are an empty field. Text that a spreadsheet
 * would run as a formula (a group key "=HYPERLINK(...)" an account's user typed) gets a leading
 * apostrophe, so it is shown as text; numbers and decimals are never text here.
 */
export function csvField(value: string | number | bigint | boolean | null | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value !== "string") return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record, CRLF-terminated (RFC 4180). */
export function csvLine(values: readonly (string | number | bigint | boolean | null | undefined)[]): string {
  return values.map(csvField).join(",") + "\r\n";
}

/** The Content-Type of a CSV answer with a header row (RFC 4180 section 3, UTF-8). */
export const CSV_CONTENT_TYPE = "text/csv; charset=utf-8; header=present";

/** Content-Disposition of a CSV answer: saved as `name`.csv rather than shown (a spreadsheet's download). */
export const csvAttachment = (name: string) => `attachment; filename="${name}.csv"`;
