import { fromJson, toJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";

/**
 * Messages whose fields carry `json_name` equal to the REST field names of the contract are the
 * REST resources themselves: toRestJson writes one as a client reads it (every field present,
 * null when unset, timestamps as RFC 3339 UTC with milliseconds), fromRestJson reads a request
 * body that zod has already validated.
 */
export function toRestJson<D extends DescMessage>(schema: D, message: MessageShape<D>): Record<string, unknown> {
  const json = toJson(schema, message, { alwaysEmitImplicit: true, enumAsInteger: true }) as Record<string, unknown>;
  return restify(schema, json);
}

export function fromRestJson<D extends DescMessage>(schema: D, json: unknown): MessageShape<D> {
  // JSON null is "not set" for every proto field, nested ones included: fromJson handles it.
  return fromJson(schema, json as JsonValue, { ignoreUnknownFields: false });
}

const PLAIN_JSON = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

/** Every field present, in the proto's field order, so every answer has the same shape. */
function restify(desc: DescMessage, json: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of desc.fields) {
    const value = json[field.jsonName];
    if (field.fieldKind === "list") {
      out[field.jsonName] =
        value === undefined
          ? []
          : field.listKind === "message" && !PLAIN_JSON.has(field.message.typeName)
            ? (value as Record<string, unknown>[]).map((v) => convertMessage(field.message, v))
            : value;
    } else if (field.fieldKind === "map") {
      out[field.jsonName] = value ?? {};
    } else if (value === undefined) {
      out[field.jsonName] = null;
    } else {
      out[field.jsonName] = field.fieldKind === "message" ? convertMessage(field.message, value) : value;
    }
  }
  return out;
}

function convertMessage(desc: DescMessage, value: unknown): unknown {
  if (desc.typeName === "google.protobuf.Timestamp") return new Date(value as string).toISOString();
  if (PLAIN_JSON.has(desc.typeName) || value === null || typeof value !== "object") return value;
  return restify(desc, value as Record<string, unknown>);
}
