// Lint = TypeScript rules + Nx module boundaries: a service imports only libs and contracts, the
// gateway only libs and the generated contracts (never a service), libs never an app; only the
// single-process launcher (deploy/local) may import services and the gateway.
import nx from "@nx/eslint-plugin";
import tseslint from "typescript-eslint";
import { noImportCycle } from "./eslint-rules/no-import-cycle.mjs";
import protoSchemaRule from "./eslint-rules/no-handwritten-proto-schema.cjs";

export default [
  { ignores: ["**/node_modules/**", "dist/**", ".nx/**", "libs/contracts/src/gen/**", "libs/sdk/src/generated/**", "libs/sdk/dist/**", "**/*.js", "**/*.mjs", "**/*.cjs"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    plugins: { "@nx": nx, local: { rules: { "no-import-cycle": noImportCycle, "no-handwritten-proto-schema": protoSchemaRule.noHandwrittenProtoSchema } } },
    rules: {
      "local/no-import-cycle": "error",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@nx/enforce-module-boundaries": [
        "error",
        {
          allow: [],
          depConstraints: [
            { sourceTag: "type:contracts", onlyDependOnLibsWithTags: [] },
            { sourceTag: "type:lib", onlyDependOnLibsWithTags: ["type:lib", "type:contracts"] },
            { sourceTag: "type:service", onlyDependOnLibsWithTags: ["type:lib", "type:contracts"] },
            { sourceTag: "type:gateway", onlyDependOnLibsWithTags: ["type:lib", "type:contracts"] },
            { sourceTag: "type:e2e", onlyDependOnLibsWithTags: ["type:lib", "type:contracts"] },
            { sourceTag: "type:launcher", onlyDependOnLibsWithTags: ["type:lib", "type:contracts", "type:service", "type:gateway"] },
          ],
        },
      ],
    },
  },
  {
    // A resource that has a REST-shaped proto message is declared by it: routes derive its schemas.
    files: ["gateway/src/routes/**/*.ts"],
    rules: { "local/no-handwritten-proto-schema": "error" },
  },
  {
    // The launcher is the one place that wires applications together in one process.
    files: ["deploy/local/**/*.ts"],
    rules: {
      "@nx/enforce-module-boundaries": ["error", { allow: ["^@analytics/gateway$", "^@analytics/[a-z]+-service$"], depConstraints: [{ sourceTag: "type:launcher", onlyDependOnLibsWithTags: ["type:lib", "type:contracts", "type:service", "type:gateway"] }] }],
    },
  },
];
