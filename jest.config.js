/** One jest run for every project: unit and integration tests next to their code, e2e under e2e/. */
const { compilerOptions } = require("./tsconfig.base.json");

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  const from = "^" + alias.replace("*", "(.*)") + "$";
  moduleNameMapper[from] = "<rootDir>/" + target.replace("*", "$1");
}

module.exports = {
  // The node environment that also kills whatever a test file left running (libs/testing/src/environment.ts).
  testEnvironment: "<rootDir>/libs/testing/src/environment.ts",
  roots: ["<rootDir>/libs", "<rootDir>/services", "<rootDir>/gateway", "<rootDir>/deploy", "<rootDir>/e2e", "<rootDir>/eslint-rules"],
  testMatch: ["**/test/**/*.test.ts", "<rootDir>/e2e/**/*.e2e.test.ts"],
  transform: { "^.+\\.(t|j)s$": ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "commonjs" } }] },
  // ES-module-only dependencies that jest's CommonJS runtime must have compiled first.
  transformIgnorePatterns: ["/node_modules/(?!(content-disposition|cookie|@seriousme/openapi-schema-validator|kubernetes-models|@kubernetes-models|is-cidr|cidr-regex)/)"],
  moduleNameMapper,
  resolver: "<rootDir>/jest.resolver.js",
  globalSetup: "<rootDir>/libs/testing/src/global-setup.ts",
  globalTeardown: "<rootDir>/libs/testing/src/global-teardown.ts",
  // A backstop for a test that hangs: waits inside tests fail first when nothing moves; a loaded
  // machine (two CPU-bound processes beside the suite) makes the slowest tests take minutes.
  testTimeout: 120_000,
  maxWorkers: 2,
};
