/**
 * jest's runtime is CommonJS and resolves packages' "require" exports. These publish ES modules
 * only (an "import" condition, nothing else), so they are resolved by it; @swc/jest compiles them
 * (transformIgnorePatterns in jest.config.js). Used by the chart's test (kubernetes-models).
 */
const esmOnly = /^(kubernetes-models|@kubernetes-models\/[^/]+)(\/|$)/;

module.exports = (request, options) =>
  options.defaultResolver(request, esmOnly.test(request) ? { ...options, conditions: ["import", "default"] } : options);
