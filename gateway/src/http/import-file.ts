import { jsonShapeProblem } from "./hostile-input";

/**
 * Reading an import's file as it arrives (CONTRACT "Imports"): lines, never the whole body. A
 * line longer than MAX_LINE_BYTES is the file's problem (a body without newlines would otherwise
 * be held whole).
 */

export const MAX_IMPORT_BYTES = 1024 * 1024 * 1024;
export const MAX_IMPORT_LINES = 10_000_000;
/** Longer than any batch item can be (a batch body is at most 10 MiB). */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** The file cannot be read: the job fails with this message (it names the line). */
export class FileProblem extends Error {}
/** Over MAX_IMPORT_BYTES or MAX_IMPORT_LINES: a 413. */
export class FileTooLarge extends Error {}

export interface Line {
  /** 1-based, counting every line of the file (blank ones too). */
  line: number;
  text: string;
  /** The line's bytes (for the JSON shape scan without encoding the text again). */
  bytes: Uint8Array;
  /** Nothing but white space: skipped, unless inside a CSV's quoted field. */
  blank: boolean;
}

/** The body's lines (LF or CRLF), blank ones too (a CSV's quoted field may hold one); `blank` says which. */
export async function* linesOf(body: AsyncIterable<Buffer>): AsyncGenerator<Line> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  let bytes = 0;
  const emit = (last: Buffer): Line => {
    let whole = pending.length ? Buffer.concat([...pending, last]) : last;
    pending = [];
    pendingBytes = 0;
    if (++line > MAX_IMPORT_LINES) throw new FileTooLarge(`the file has more than ${MAX_IMPORT_LINES} lines`);
    if (whole.length && whole[whole.length - 1] === 0x0d) whole = whole.subarray(0, whole.length - 1);
    const text = whole.toString("utf8");
    return { line, text, bytes: whole, blank: !text.trim() };
  };
  try {
    for await (const chunk of body) {
      bytes += chunk.length;
      if (bytes > MAX_IMPORT_BYTES) throw new FileTooLarge(`the file is larger than ${MAX_IMPORT_BYTES} bytes (1 GiB)`);
      let from = 0;
      for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
        yield emit(chunk.subarray(from, nl));
        from = nl + 1;
      }
      if (from < chunk.length) {
        pending.push(chunk.subarray(from));
        pendingBytes += chunk.length - from;
        if (pendingBytes > MAX_LINE_BYTES) throw new FileProblem(`line ${line + 1} is longer than ${MAX_LINE_BYTES} bytes`);
      }
    }
  } catch (error) {
    if (error instanceof FileProblem || error instanceof FileTooLarge) throw error;
    throw new FileProblem(`the body was cut off after line ${line}`);
  }
  if (pendingBytes) yield emit(Buffer.alloc(0));
}

/**
 * An NDJSON file's items: one JSON value per line. A line too deep or too wide for a batch body
 * (jsonShapeProblem, the same scan as every JSON body's) is that line's refusal, never parsed.
 */
export async function* ndjsonItems(body: AsyncIterable<Buffer>): AsyncGenerator<{ line: number; item: unknown; refused?: string; size: number }> {
  for await (const { line, text, bytes, blank } of linesOf(body)) {
    if (blank) continue;
    const tooWide = jsonShapeProblem(bytes);
    if (tooWide) {
      yield { line, item: undefined, refused: `${tooWide.path ? `${tooWide.path}: ` : ""}${tooWide.message}`, size: bytes.length };
      continue;
    }
    let item: unknown;
    try {
      item = JSON.parse(text);
    } catch (error) {
      throw new FileProblem(`line ${line} is not JSON: ${(error as Error).message}`.slice(0, 500));
    }
    yield { line, item, size: bytes.length };
  }
}

/** How a CSV column's text becomes the item's JSON value (from the item's JSON schema). */
export type ColumnType = "string" | "number" | "boolean" | "string|number";

/**
 * A CSV file's items (RFC 4180, UTF-8, a header row naming the item's JSON fields; a quoted field
 * may hold commas, quotes and newlines). `columns` are the fields a CSV may name (matched without
 * regard to letter case, as batch bodies are); `nested` those only NDJSON can carry. An empty
 * field is an absent one.
 */
export async function* csvItems(body: AsyncIterable<Buffer>, columns: Map<string, ColumnType>, nested: Set<string>): AsyncGenerator<{ line: number; item: unknown }> {
  let header: { name: string; type: ColumnType }[] | undefined;
  for await (const { line, fields } of csvRecords(linesOf(body))) {
    if (!header) {
      header = fields.map((name) => {
        const field = name.trim();
        if (nested.has(field.toLowerCase())) throw new FileProblem(`line ${line}: column ${field} holds an object or array: send it as NDJSON`);
        const type = columns.get(field.toLowerCase());
        if (!type) throw new FileProblem(`line ${line}: unknown field ${field} in the CSV header`.slice(0, 500));
        return { name: field, type };
      });
      continue;
    }
    if (fields.length !== header.length) throw new FileProblem(`line ${line} has ${fields.length} fields, the header ${header.length}`);
    const item: Record<string, unknown> = {};
    header.forEach(({ name, type }, i) => {
      if (fields[i] !== "") item[name] = valueOf(fields[i], type);
    });
    yield { line, item };
  }
}

function valueOf(text: string, type: ColumnType): unknown {
  if (type === "boolean") return text === "true" ? true : text === "false" ? false : text;
  if (type === "number") return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text.trim()) ? Number(text) : text;
  return text;
}

/** RFC 4180 records of CSV lines, each with the line it starts on. */
async function* csvRecords(lines: AsyncIterable<Line>): AsyncGenerator<{ line: number; fields: string[] }> {
  let fields: string[] = [];
  let field = "";
  let quoted = false;
  let start = 0;
  for await (const { line, text, blank } of lines) {
    if (!quoted) {
      if (blank) continue;
      start = line;
    } else field += "\n";
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quoted) {
        if (c !== '"') field += c;
        else if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else if (c === '"' && field === "") quoted = true;
      else if (c === ",") {
        fields.push(field);
        field = "";
      }
      else field += c;
    }
    if (quoted) continue;
    fields.push(field);
    yield { line: start, fields };
    fields = [];
    field = "";
  }
  if (quoted) throw new FileProblem(`line ${start}: a quoted field is not closed`);
}
