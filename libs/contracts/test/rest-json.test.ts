import { create, equals, ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import * as contracts from "../src";
import { fromRestJson, stringifyRest, toRestJson } from "../src";
import { fromRestJsonViaProtoJson, readRest, toRestJsonViaProtoJson } from "../src/rest-json";

/**
 * Every message type of the contracts, from the generated namespaces (the field-rules option's
 * extendee, google.protobuf.FieldOptions, is reachable from them too, but is no contract).
 */
const schemas: DescMessage[] = Object.values(contracts)
  .flatMap((ns) => (ns && typeof ns === "object" ? Object.values(ns) : []))
  .filter((v): v is DescMessage => !!v && typeof v === "object" && (v as DescMessage).kind === "message" && (v as DescMessage).typeName.startsWith("analytics."));

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

  it("reads every message type as fromJson does, and takes the direct road for plain REST bodies", () => {
    const r = random(7);
    let direct = 0;
    let total = 0;
    for (const schema of schemas) {
      for (let round = 0; round < 20; round++) {
        const message = create(schema, messageValue(schema, r, 0) as never);
        // What a client sends: the REST answer's JSON text, parsed.
        const body = JSON.parse(stringifyRest(toRestJson(schema, message)));
        const read = readRest(schema, body);
        total++;
        let reference: ReturnType<typeof fromRestJsonViaProtoJson>;
        try {
          reference = fromRestJsonViaProtoJson(schema, body);
        } catch (error) {
          // (The generator's keys of integer-keyed maps are not numbers.) The same error either way.
          expect(read).toBeUndefined();
          expect(() => fromRestJson(schema, body)).toThrow((error as Error).message);
          continue;
        }
        if (read !== undefined) {
          direct++;
          expect([schema.typeName, equals(schema, read as never, reference)]).toEqual([schema.typeName, true]);
        }
        expect(equals(schema, fromRestJson(schema, body), reference)).toBe(true);
      }
    }
    // The bodies the generator makes without 64-bit integers, bytes or oneofs take the direct road.
    expect(direct / total).toBeGreaterThan(0.3);
  });

  it("takes the direct road for a purchase order and a product as the gateway passes them", () => {
    const order = {
      externalPONo: "PO-1",
      orderDate: "2026-03-01T00:00:00.000Z",
      deliveryStatus: 4,
      attributes: { factory: "F1", nested: [1, "two", null, { x: true }] },
      items: [{ externalRowID: "1", key: "K", quantity: 3, totalPriceNet: 100.5, deliveries: [{ deliveryID: "D", quantity: 1, deliveryDate: "2026-04-01T00:00:00.123456Z" }] }],
    };
    const po = readRest(contracts.ordersV1.PurchaseOrderSchema, order);
    expect(po).toBeDefined();
    expect(equals(contracts.ordersV1.PurchaseOrderSchema, po as never, fromRestJsonViaProtoJson(contracts.ordersV1.PurchaseOrderSchema, order))).toBe(true);
    const product = { key: "K", sku: "S", costCalculationPrice: 19.99, externalAttributes: { n: 1 } };
    expect(readRest(contracts.catalogueV1.ProductSchema, product)).toBeDefined();
  });

  it("leaves to fromJson what only it decides, with its own errors", () => {
    const PO = contracts.ordersV1.PurchaseOrderSchema;
    const cases: [unknown, RegExp | undefined][] = [
      [{ externalPONo: "P", unknownField: 1 }, /unknownField/],
      [{ externalPONo: "P", deliveryStatus: 1.5 }, /delivery_status/],
      [{ externalPONo: "P", deliveryStatus: 2 ** 31 }, /delivery_status/],
      [{ externalPONo: "P", orderDate: "0000-01-01T00:00:00Z" }, /0001-01-01/],
      [{ externalPONo: "P", items: [{ quantity: "3" }] }, undefined],
      [{ externalPONo: "P", orderDate: "2026-03-01T01:00:00+01:00" }, undefined],
      [{ external_po_no: "P" }, undefined],
      [{ externalPONo: "P", attributes: { x: undefined } }, /./],
    ];
    for (const [body, error] of cases) {
      expect(readRest(PO, body)).toBeUndefined();
      if (error) {
        expect(() => fromRestJsonViaProtoJson(PO, body)).toThrow(error);
        expect(() => fromRestJson(PO, body)).toThrow(error);
      } else expect(equals(PO, fromRestJson(PO, body), fromRestJsonViaProtoJson(PO, body))).toBe(true);
    }
  });
});
