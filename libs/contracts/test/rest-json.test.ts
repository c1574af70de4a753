import { create, ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import * as contracts from "../src";
import { fromRestJson, stringifyRest, toRestJson } from "../src";
import { toRestJsonViaProtoJson } from "../src/rest-json";

/** Every message type of the contracts, from the generated namespaces. */
const schemas: DescMessage[] = Object.values(contracts)
  .flatMap((ns) => (ns && typeof ns === "object" ? Object.values(ns) : []))
  .filter((v): v is DescMessage => !!v && typeof v === "object" && (v as DescMessage).kind === "message");

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

function scalarValue(type: ScalarType, r: () => number): unknown {
  const n = Math.floor(r() * 2000) - 1000;
  switch (type) {
    case ScalarType.STRING:
      return ["", "a", "ü ✓", "\u0000x", "line\nbreak"][Math.floor(r() * 5)];
    case ScalarType.BOOL:
      return r() < 0.5;
    case ScalarType.BYTES:
      return new Uint8Array([n & 255, 0, 255]);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return BigInt(n) * 1_000_003n;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return BigInt(Math.abs(n)) * 1_000_003n;
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return Math.abs(n);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return n / 4;
    default:
      return n;
  }
}

function fieldValue(field: DescField, r: () => number, depth: number): unknown {
  const one = (kind: "scalar" | "enum" | "message", scalar?: ScalarType, message?: DescMessage, values?: { number: number }[]): unknown => {
    if (kind === "scalar") return scalarValue(scalar!, r);
    if (kind === "enum") return values![Math.floor(r() * values!.length)].number;
    return messageValue(message!, r, depth + 1);
  };
  switch (field.fieldKind) {
    case "scalar":
      return one("scalar", field.scalar);
    case "enum":
      return one("enum", undefined, undefined, field.enum.values);
    case "message":
      return one("message", undefined, field.message);
    case "list":
      return Array.from({ length: Math.floor(r() * 3) }, () =>
        field.listKind === "message" ? one("message", undefined, field.message) : field.listKind === "enum" ? one("enum", undefined, undefined, field.enum.values) : one("scalar", field.scalar),
      );
    case "map":
      return Object.fromEntries(
        Array.from({ length: Math.floor(r() * 3) }, (_, i) => [`k${i}`, field.mapKind === "message" ? one("message", undefined, field.message) : field.mapKind === "enum" ? one("enum", undefined, undefined, field.enum.values) : one("scalar", field.scalar)]),
      );
  }
}

function messageValue(desc: DescMessage, r: () => number, depth: number): unknown {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return { seconds: BigInt(Math.floor(r() * 4e9)), nanos: Math.floor(r() * 1e9) };
    case "google.protobuf.Struct":
      return { n: Math.floor(r() * 100), s: "x", nested: { list: [1, "two", null, true] } };
    case "analytics.common.v1.Decimal":
      return { value: ["0", "19.99", "-0.5", "123456789012.345", "0.0000001"][Math.floor(r() * 5)] };
  }
  const init: Record<string, unknown> = {};
  if (depth > 3) return init;
  for (const field of desc.fields) {
    if (r() < 0.3) continue; // unset: null in REST
    const value = fieldValue(field, r, depth);
    if (field.oneof) init[field.oneof.localName] = { case: field.localName, value };
    else init[field.localName] = value;
  }
  return init;
}

describe("toRestJson", () => {
  it("finds the contracts' message types", () => {
    expect(schemas.length).toBeGreaterThan(20);
    expect(schemas.map((s) => s.typeName)).toContain("analytics.catalogue.v1.Product");
  });

  it("writes exactly what protobuf-es's JSON made REST-shaped writes, for every message type", () => {
    const r = random(42);
    for (const schema of schemas) {
      for (let round = 0; round < 20; round++) {
        const message = create(schema, messageValue(schema, r, 0) as never);
        expect([schema.typeName, stringifyRest(toRestJson(schema, message))]).toEqual([schema.typeName, stringifyRest(toRestJsonViaProtoJson(schema, message))]);
      }
    }
  });
});

describe("fromRestJson", () => {
  it("reads decimals sent as JSON numbers in maps too (a price's customPrices)", () => {
    const price = fromRestJson(contracts.pricingV1.PriceSchema, { customPrices: { outlet: 19.99, staff: 0.0000001 } });
    expect(Object.fromEntries(Object.entries(price.customPrices).map(([k, v]) => [k, v.value]))).toEqual({ outlet: "19.99", staff: "0.0000001" });
  });

  it("refuses a list where a map of decimals belongs (it is not read as a map keyed 0, 1, ...)", () => {
    expect(() => fromRestJson(contracts.pricingV1.PriceSchema, { customPrices: [19.99] })).toThrow(/custom_prices/);
  });
});
