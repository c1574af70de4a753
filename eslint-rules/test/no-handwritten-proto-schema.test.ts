import { join } from "node:path";
import { RuleTester } from "eslint";
import tseslint from "typescript-eslint";
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the rule is CommonJS, as eslint.config.mjs loads it
const { noHandwrittenProtoSchema, readMessages } = require("../no-handwritten-proto-schema.cjs");

const protoDir = join(__dirname, "../../proto");
const tester = new RuleTester({ languageOptions: { parser: tseslint.parser as never } });
const options = [{ protoDir }];

describe("no-handwritten-proto-schema", () => {
  it("reads the REST-shaped messages of a proto file (fields with json_name), comments aside", () => {
    const found = readMessages(
      `message Shown { string a = 1 [json_name = "a"]; // json_name = "nope"\n  string b = 2 [json_name = "b"]; }\nmessage Internal { string c = 1; }\n`,
      new Map(),
    );
    expect([...found]).toEqual([["Shown", new Set(["a", "b"])]]);
  });

  tester.run("no-handwritten-proto-schema", noHandwrittenProtoSchema, {
    valid: [
      // Derived from the message, with what REST does differently.
      { code: `const s = z.object({ ...answerShape(UploadedImageSchema), extra: z.string() });`, options },
      { code: `const s = z.strictObject({ id: z.number(), ...requestShape(catalogueV1.ProductSchema, opts) });`, options },
      // A query or a shape of no message.
      { code: `const q = z.object({ page: z.number(), pageSize: z.number() });`, options },
      { code: `const one = z.object({ key: z.string() });`, options },
      // A shape of no message, named first; a name bound to something else.
      { code: `const query = { page: z.number(), pageSize: z.number() }; const q = z.object(query);`, options },
      { code: `function f(shape) { return z.object(shape); }`, options },
      { code: `let shape = { key: z.string(), imageUrl: z.string() }; shape = {}; const r = z.object(shape);`, options },
    ],
    invalid: [
      // The image upload's answer (UploadedImage) written by hand.
      { code: `const r = z.object({ key: z.string(), imageUrl: z.string() });`, options, errors: [{ message: /proto message UploadedImage \(key, imageUrl\)/ }] },
      // A product answer, written by hand with a few REST-only fields.
      {
        code: `const p = z.strictObject({ id: z.number(), uuid: z.string(), key: z.string(), sku: z.string().nullable(), productName: z.string(), season: z.string() });`,
        options,
        errors: [{ message: /proto message Product \(id, key, sku, productName, season\)/ }],
      },
      // The same, named first (in this scope or an outer one).
      { code: `const shape = { key: z.string(), imageUrl: z.string() }; const r = z.object(shape);`, options, errors: [{ message: /proto message UploadedImage \(key, imageUrl\)/ }] },
      { code: `const shape = { key: z.string(), imageUrl: z.string() }; function answer() { return z.strictObject(shape); }`, options, errors: 1 },
      { code: `route(ctx, { responses: { 200: { schema: z.array(z.looseObject({ mappingField: z.string(), mappingType: z.string(), mappingValues: z.record(z.string(), z.string()) })) } } });`, options, errors: 1 },
    ],
  });
});
