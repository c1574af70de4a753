// Lint rule: a gateway route does not write by hand the zod schema of a resource that has a proto
// message. REST-shaped messages (fields with json_name = the REST name) are the resource's one
// declaration; the gateway derives their request and answer schemas from them (requestShape and
// answerShape, gateway/src/http/proto-schema.ts), so a field added to the proto is in the route,
// its 400s and the OpenAPI document without an edit. A `z.object({...})` literal (or
// strictObject, looseObject; or a `const` naming such a literal) whose keys are mostly one
// message's JSON names is that resource written again: it is refused. A literal that spreads a
// derived shape (`...answerShape(...)`) only adds what REST does differently and passes.
// CommonJS so that jest (the repository's test runner) can load it as eslint.config.mjs does.
const { existsSync, readFileSync, readdirSync } = require("node:fs");
const { join } = require("node:path");

/** The REST-shaped messages of the proto files under `dir`: name -> JSON names of its fields. */
function restMessages(dir) {
  const found = new Map();
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".proto")) readMessages(readFileSync(path, "utf8"), found);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

/** Top-level messages of one proto file, by their braces; a message without json_name fields is not REST-shaped. */
function readMessages(text, into) {
  const source = text.replace(/\/\/[^\n]*/g, "");
  const start = /(^|\n)message\s+(\w+)\s*\{/g;
  let m;
  while ((m = start.exec(source))) {
    let depth = 1;
    let i = start.lastIndex;
    while (depth && i < source.length) depth += source[i] === "{" ? 1 : source[i] === "}" ? -1 : 0, i++;
    const names = [...source.slice(start.lastIndex, i).matchAll(/json_name\s*=\s*"([^"]+)"/g)].map((n) => n[1]);
    if (names.length) into.set(m[2], new Set(names));
    start.lastIndex = i;
  }
  return into;
}

const OBJECT_BUILDERS = new Set(["object", "strictObject", "looseObject"]);
/** Spreading one of these makes a literal derived: it only adds or overrides fields. */
const DERIVED = new Set(["answerShape", "requestShape"]);

const calleeName = (node) => (node.type === "Identifier" ? node.name : node.type === "MemberExpression" && !node.computed ? node.property.name : undefined);
const keyName = (p) => (p.type !== "Property" || p.computed ? undefined : p.key.type === "Identifier" ? p.key.name : typeof p.key.value === "string" ? p.key.value : undefined);

/**
 * The object literal a schema is built from: the argument itself, or the literal a `const` in
 * scope names (`const shape = {...}; z.object(shape)` is the same hand-written schema).
 */
function literalOf(context, node, argument) {
  if (argument?.type !== "Identifier") return argument;
  for (let scope = context.sourceCode.getScope(node); scope; scope = scope.upper) {
    const variable = scope.set.get(argument.name);
    if (!variable) continue;
    const [def] = variable.defs;
    return def?.type === "Variable" && def.parent.kind === "const" ? def.node.init : undefined;
  }
  return undefined;
}

const byProtoDir = new Map();

module.exports = {
  restMessages,
  readMessages,
  noHandwrittenProtoSchema: {
    meta: {
      type: "problem",
      docs: { description: "refuse a hand-written zod schema of a resource that has a REST-shaped proto message" },
      schema: [{ type: "object", properties: { protoDir: { type: "string" } }, additionalProperties: false }],
    },
    create(context) {
      const protoDir = context.options[0]?.protoDir ?? join(context.cwd, "proto");
      let messages = byProtoDir.get(protoDir);
      if (!messages) byProtoDir.set(protoDir, (messages = restMessages(protoDir)));
      return {
        CallExpression(node) {
          if (node.callee.type !== "MemberExpression" || !OBJECT_BUILDERS.has(calleeName(node.callee))) return;
          // Only a schema builder's argument is looked up in scope, not every call's.
          const shape = literalOf(context, node, node.arguments[0]);
          if (shape?.type !== "ObjectExpression") return;
          if (shape.properties.some((p) => p.type === "SpreadElement" && p.argument.type === "CallExpression" && DERIVED.has(calleeName(p.argument.callee)))) return;
          const keys = shape.properties.map(keyName).filter(Boolean);
          let best;
          for (const [name, fields] of messages) {
            const matched = keys.filter((k) => fields.has(k));
            // Two names at least, most of the literal's keys, and as many as the message has or three.
            if (matched.length < 2 || matched.length * 2 < keys.length || matched.length < Math.min(fields.size, 3)) continue;
            if (!best || matched.length > best.matched.length) best = { name, matched };
          }
          if (best) {
            context.report({
              node,
              message: `hand-written schema of the proto message ${best.name} (${best.matched.join(", ")}): derive it from the message with answerShape or requestShape (gateway/src/http/proto-schema.ts), naming only what REST does differently`,
            });
          }
        },
      };
    },
  },
};
