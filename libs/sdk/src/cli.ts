/**
 * `analytics`: the SDK's command line (docs/cli.md). Every command takes --help; exit codes are
 * EXIT below, the same in every command.
 */
import { createReadStream, createWriteStream, readFileSync, statSync, writeFileSync, chmodSync, mkdirSync } from "node:fs";
import { createInterface } from "node:readline";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { Client, queryString, type Spec } from "./core/client";
import { ApiError, AuthenticationError, ConnectionError } from "./core/errors";
import { followImport, importResults } from "./core/imports";
import { eventQueue } from "./core/queue";
import { Imports, type CreateImportQuery } from "./generated/imports";
import { OPERATIONS } from "./generated/operations";
import type { Import } from "./generated/schemas";

/** What a script can rely on. */
export const EXIT = {
  ok: 0,
  /** The API refused (a 4xx other than 401, or a 5xx after the retries), or no answer. */
  apiError: 1,
  /** Wrong usage: an unknown command, option or operation, a missing argument. */
  usage: 2,
  /** No credentials, or the API refused them (401), or a profile file others may read. */
  credentials: 3,
  /** An import ended with failed lines (completed_with_errors); they are in the failed-lines file. */
  importLinesFailed: 4,
  /** An import failed as a whole or was cancelled. */
  importFailed: 5,
} as const;

class UsageError extends Error {}
class CredentialsError extends Error {}

interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** A progress line is redrawn in place on a terminal, else written as lines. */
  tty: boolean;
}

const GLOBAL = `Options of every command:
  --base-url URL     where the API answers (env ANALYTICS_BASE_URL, or the profile's)
  --profile FILE     the profile file (env ANALYTICS_PROFILE; default ~/.config/analytics/profile.json)
  --help             this command's help
Credentials: env ANALYTICS_ACCOUNT_ID and ANALYTICS_API_KEY, else the profile file (mode 600).
Exit codes: 0 ok, 1 API error or no answer, 2 usage, 3 credentials, 4 import with failed lines, 5 import failed or cancelled.`;

const HELP: Record<string, string> = {
  "": `Usage: analytics <command> [options]

Commands:
  login        check credentials and keep them in the profile file (mode 600)
  operations   list every operation id
  call         call any operation by its id
  import       import a file of a resource's items, following the job to its end
  export       a planning answer as CSV
  tail         print the event queue's pending entries, acknowledging each

${GLOBAL}`,
  login: `Usage: analytics login --base-url URL [--account-id ID] [--api-key KEY]

Exchanges the credentials for a token (POST /v2/api/auth) and, when they are right, writes them
to the profile file with mode 600. The key may come from env ANALYTICS_API_KEY instead of --api-key.

${GLOBAL}`,
  operations: `Usage: analytics operations

One line per operation: its id, method and path.

${GLOBAL}`,
  call: `Usage: analytics call <operationId> [--param name=value ...] [--body JSON|@file|-] [--all]

--param      a path or query parameter (repeatable; repeat a name for a list)
--body       the JSON body: inline, @file, or - for stdin
--all        a paged list: every item of every page, one JSON line each
The answer is printed as JSON.

${GLOBAL}`,
  import: `Usage: analytics import <resource> <file> [--format ndjson|csv] [--failed FILE] [--progress]

Uploads the file (POST /v2/api/imports?resource=<resource>) as it is read, then follows the job
to its end, showing lines a second, percent and ETA on stderr (always with --progress, else on a
terminal). The failed input lines are written to --failed (default <file>.failed), with a CSV's
header first, to be fixed and imported again; each line's error goes to stderr.

${GLOBAL}`,
  export: `Usage: analytics export <operationId> --param fromDate=YYYY-MM-DD --param toDate=YYYY-MM-DD [--param ...] [--out FILE]

A planning answer (listPlanningBreakdown, listPlanningSalesPlans, ...) as CSV (Accept: text/csv),
streamed to --out or stdout.

${GLOBAL}`,
  tail: `Usage: analytics tail [--follow] [--type update_sku|draft_po_change|sku_warehouse_settings_change]

Prints the pending queue entries, oldest first, one JSON line each, and acknowledges each once
printed (PATCH /v2/api/events/batch). --follow keeps waiting for new entries until interrupted.

${GLOBAL}`,
};

const common = {
  "base-url": { type: "string" },
  profile: { type: "string" },
  help: { type: "boolean" },
} as const satisfies ParseArgsConfig["options"];

function parse<O extends ParseArgsConfig["options"]>(args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...common, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

interface Profile {
  baseUrl?: string;
  accountID?: string;
  apiKey?: string;
}

const profilePath = (io: Io, given?: string) => given || io.env.ANALYTICS_PROFILE || join(homedir(), ".config/analytics/profile.json");

function readProfile(path: string): Profile {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return {};
  }
  // Like ssh with a private key: a profile others can read is refused, not used.
  if (process.platform !== "win32" && mode & 0o077) throw new CredentialsError(`${path} may be read by others (mode ${(mode & 0o777).toString(8)}): chmod 600 ${path}`);
  return JSON.parse(readFileSync(path, "utf8")) as Profile;
}

function clientOf(io: Io, values: { "base-url"?: string; profile?: string }): Client {
  const profile = readProfile(profilePath(io, values.profile));
  const baseUrl = values["base-url"] || io.env.ANALYTICS_BASE_URL || profile.baseUrl;
  if (!baseUrl) throw new UsageError("no base URL: --base-url, env ANALYTICS_BASE_URL, or `analytics login`");
  const fromEnv = io.env.ANALYTICS_ACCOUNT_ID && io.env.ANALYTICS_API_KEY;
  const accountID = fromEnv ? io.env.ANALYTICS_ACCOUNT_ID : profile.accountID;
  const apiKey = fromEnv ? io.env.ANALYTICS_API_KEY : profile.apiKey;
  if (!accountID || !apiKey) throw new CredentialsError("no credentials: env ANALYTICS_ACCOUNT_ID and ANALYTICS_API_KEY, or `analytics login`");
  return new Client({ baseUrl, accountID, apiKey });
}

const write = (stream: NodeJS.WritableStream, text: string) => new Promise<void>((resolve, reject) => stream.write(text, (error) => (error ? reject(error) : resolve())));

/** The operation's spec and its parameters split into the path's and the query's. */
/** An operation as the table says it, read as one type. */
interface Operation {
  method: string;
  path: string;
  pathParams: readonly string[];
  query: readonly string[];
  body?: "json" | readonly string[];
  auth: Spec["auth"];
  paged: boolean;
  answer?: string;
  alternatives: readonly string[];
}

function operationCall(id: string, params: string[] = []): { spec: Spec; query: Record<string, string | string[]>; op: Operation } {
  const op = (OPERATIONS as Record<string, Operation>)[id];
  if (!op) throw new UsageError(`no operation ${id}: see \`analytics operations\``);
  const path: Record<string, string> = {};
  const query: Record<string, string | string[]> = {};
  for (const param of params) {
    const at = param.indexOf("=");
    if (at < 1) throw new UsageError(`--param ${param}: give name=value`);
    const [name, value] = [param.slice(0, at), param.slice(at + 1)];
    if (op.pathParams.includes(name)) path[name] = value;
    else if (op.query.includes(name)) query[name] = name in query ? [query[name]].flat().concat(value) : value;
    else throw new UsageError(`${id} takes no parameter ${name} (path: ${op.pathParams.join(", ") || "none"}; query: ${op.query.join(", ") || "none"})`);
  }
  const missing = op.pathParams.filter((name) => !(name in path));
  if (missing.length) throw new UsageError(`${id} needs --param ${missing.map((m) => `${m}=...`).join(" --param ")}`);
  const filled = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(path[name]));
  return { spec: { method: op.method, path: filled, auth: op.auth }, query, op };
}

async function login(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { "account-id": { type: "string" }, "api-key": { type: "string" } });
  if (values.help) return help(io, "login");
  const path = profilePath(io, values.profile);
  const baseUrl = values["base-url"] || io.env.ANALYTICS_BASE_URL;
  const accountID = values["account-id"] || io.env.ANALYTICS_ACCOUNT_ID;
  const apiKey = values["api-key"] || io.env.ANALYTICS_API_KEY;
  if (!baseUrl || !accountID || !apiKey) throw new UsageError("login needs --base-url, --account-id and --api-key (or their env variables)");
  await new Client({ baseUrl, accountID, apiKey }).accessToken();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, JSON.stringify({ baseUrl, accountID, apiKey }, null, 2) + "\n", { mode: 0o600 });
  chmodSync(path, 0o600);
  await write(io.stderr, `signed in as ${accountID}; credentials kept in ${path}\n`);
  return EXIT.ok;
}

async function operations(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, {});
  if (values.help) return help(io, "operations");
  for (const [id, op] of Object.entries(OPERATIONS)) await write(io.stdout, `${id}\t${op.method}\t${op.path}\n`);
  return EXIT.ok;
}

async function call(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { param: { type: "string", multiple: true }, body: { type: "string" }, all: { type: "boolean" } });
  if (values.help) return help(io, "call");
  if (positionals.length !== 1) throw new UsageError("call takes one operation id");
  const { spec, query, op } = operationCall(positionals[0], values.param);
  if (op.body && op.body !== "json") throw new UsageError(`${positionals[0]} takes a file: use \`analytics import\``);
  let body: unknown;
  if (values.body !== undefined) {
    const text = values.body === "-" ? readFileSync(0, "utf8") : values.body.startsWith("@") ? readFileSync(values.body.slice(1), "utf8") : values.body;
    try {
      body = JSON.parse(text);
    } catch {
      throw new UsageError("--body is not JSON");
    }
  } else if (op.body) throw new UsageError(`${positionals[0]} needs --body`);
  const client = clientOf(io, values);
  if (values.all && op.paged) {
    for await (const item of client.paged(spec, query)) await write(io.stdout, JSON.stringify(item) + "\n");
    return EXIT.ok;
  }
  if (op.answer === "application/x-ndjson") {
    for await (const line of client.lines(spec, query)) await write(io.stdout, JSON.stringify(line) + "\n");
    return EXIT.ok;
  }
  const answer = await client.call(spec, query, body);
  await write(io.stdout, (typeof answer === "string" ? answer : JSON.stringify(answer ?? null, null, 2)) + "\n");
  return EXIT.ok;
}

/** "12,345 lines/s  45%  ETA 12s". */
const rateLine = (done: number, total: number | undefined, startedAt: number) => {
  const seconds = Math.max(0.001, (Date.now() - startedAt) / 1000);
  const rate = done / seconds;
  const percent = total ? Math.floor((100 * done) / total) : undefined;
  const eta = total && rate > 0 ? Math.ceil((total - done) / rate) : undefined;
  return `${Math.round(rate).toLocaleString("en")} lines/s  ${percent === undefined ? "?" : percent}%  ETA ${eta === undefined ? "?" : `${eta}s`}`;
};

async function importCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { format: { type: "string" }, failed: { type: "string" }, progress: { type: "boolean" } });
  if (values.help) return help(io, "import");
  if (positionals.length !== 2) throw new UsageError("import takes a resource and a file");
  const [resource, file] = positionals;
  const format = values.format ?? (file.endsWith(".csv") ? "csv" : "ndjson");
  if (format !== "csv" && format !== "ndjson") throw new UsageError("--format is ndjson or csv");
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new UsageError(`no file ${file}`);
  }
  const client = clientOf(io, values);
  const showing = values.progress || io.tty;
  const show = (text: string) => (showing ? write(io.stderr, io.tty ? `\r\x1b[2K${text}` : `${text}\n`) : Promise.resolve());
  // The upload's progress: bytes and lines read from the file as the request sends them.
  const started = Date.now();
  let bytes = 0;
  let lines = 0;
  let shownAt = 0;
  const counting = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      if (Date.now() - shownAt > 500) {
        shownAt = Date.now();
        const seconds = Math.max(0.001, (Date.now() - started) / 1000);
        void show(`uploading ${Math.floor((100 * bytes) / Math.max(1, size))}%  ${Math.round(lines / seconds).toLocaleString("en")} lines/s  ETA ${Math.ceil(((size - bytes) / Math.max(1, bytes)) * seconds)}s`);
      }
      done(null, chunk);
    },
  });
  const body = Readable.toWeb(createReadStream(file).pipe(counting)) as unknown as ReadableStream<Uint8Array>;
  // The resource as typed: the API names the ones it takes when it refuses another (400).
  const job = await new Imports(client).createImport(body, { resource: resource as CreateImportQuery["resource"] }, { contentType: format === "csv" ? "text/csv" : "application/x-ndjson" });
  const applying = Date.now();
  const ended: Import = await followImport(client, job, {
    onProgress: (j) => void show(`${j.status} ${j.linesProcessed.toLocaleString("en")}/${j.linesTotal?.toLocaleString("en") ?? "?"} lines  ${rateLine(j.linesProcessed, j.linesTotal ?? undefined, applying)}`),
  });
  if (io.tty && showing) await write(io.stderr, "\n");
  await write(io.stderr, `import ${ended.id}: ${ended.status}, ${ended.linesSucceeded} lines applied, ${ended.linesFailed} failed${ended.message ? `: ${ended.message}` : ""}\n`);
  if (ended.status === "failed" || ended.status === "cancelled") return EXIT.importFailed;
  if (!ended.linesFailed) return EXIT.ok;
  // The failed input lines themselves (a CSV's header first), to fix and send again.
  const failed = new Map<number, string>();
  for await (const result of importResults(client, ended.id, "failed")) {
    failed.set(result.line, result.message);
    await write(io.stderr, `line ${result.line}: ${result.statusCode} ${result.message}\n`);
  }
  const out = values.failed ?? `${file}.failed`;
  const sink = createWriteStream(out);
  let number = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    number++;
    if (failed.has(number) || (format === "csv" && number === 1)) if (!sink.write(line + "\n")) await new Promise<void>((resolve) => sink.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) => sink.end((error?: Error | null) => (error ? reject(error) : resolve())));
  await write(io.stderr, `${failed.size} failed lines written to ${out}\n`);
  return EXIT.importLinesFailed;
}

async function exportCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { param: { type: "string", multiple: true }, out: { type: "string" } });
  if (values.help) return help(io, "export");
  if (positionals.length !== 1) throw new UsageError("export takes one planning operation id");
  const { spec, query, op } = operationCall(positionals[0], values.param);
  if (!op.alternatives.includes("text/csv")) {
    const csv = Object.entries(OPERATIONS as Record<string, Operation>).filter(([, o]) => o.alternatives.includes("text/csv")).map(([id]) => id);
    throw new UsageError(`${positionals[0]} has no CSV answer; these do: ${csv.join(", ")}`);
  }
  const res = await clientOf(io, values).send(spec, spec.path + queryString(query), undefined, { headers: { accept: "text/csv" } });
  await pipeline(Readable.fromWeb(res.body as never), values.out ? createWriteStream(values.out) : io.stdout);
  return EXIT.ok;
}

async function tail(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { follow: { type: "boolean" }, type: { type: "string" } });
  if (values.help) return help(io, "tail");
  const client = clientOf(io, values);
  const stop = new AbortController();
  const interrupted = () => stop.abort();
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    for await (const entry of eventQueue(client, { follow: values.follow, eventType: values.type as never, signal: stop.signal })) await write(io.stdout, JSON.stringify(entry) + "\n");
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  } finally {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
  }
  return EXIT.ok;
}

async function help(io: Io, command: string): Promise<number> {
  await write(io.stdout, HELP[command] + "\n");
  return EXIT.ok;
}

const COMMANDS: Record<string, (args: string[], io: Io) => Promise<number>> = { login, operations, call, import: importCommand, export: exportCommand, tail };

/** Runs one command line; answers its exit code (errors are written to stderr, never thrown). */
export async function main(argv: string[], io: Io): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (!command || command === "help" || command === "--help" || command === "-h") return await help(io, args[0] && HELP[args[0]] ? args[0] : "");
    const run = COMMANDS[command];
    if (!run) throw new UsageError(`no command ${command}`);
    return await run(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      await write(io.stderr, `analytics: ${error.message}\nSee: analytics ${COMMANDS[command] ? `${command} ` : ""}--help\n`);
      return EXIT.usage;
    }
    if (error instanceof CredentialsError || error instanceof AuthenticationError) {
      await write(io.stderr, `analytics: ${error.message}\n`);
      return EXIT.credentials;
    }
    if (error instanceof ApiError) {
      const details = error.details.map((d) => `\n  ${d.path}: ${d.message}`).join("");
      await write(io.stderr, `analytics: ${error.status} ${error.code ?? ""}: ${error.message}${details}${error.requestId ? `\n  request id: ${error.requestId}` : ""}\n`);
      return EXIT.apiError;
    }
    if (error instanceof ConnectionError) {
      await write(io.stderr, `analytics: ${error.message}\n`);
      return EXIT.apiError;
    }
    throw error;
  }
}

// Run as the package's bin (the CommonJS build), not when imported.
if (typeof require !== "undefined" && require.main === module) {
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, tty: Boolean(process.stderr.isTTY) }).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(`analytics: ${(error as Error)?.stack ?? String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
