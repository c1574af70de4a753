// Lint rule: no file may reach itself through relative imports (type-only imports included).
// Between projects, Nx's enforce-module-boundaries already refuses cycles; this catches them
// inside one (a.ts -> b.ts -> a.ts), which make load order matter and modules hard to split.
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import ts from "typescript";

/** Each file's relative imports, resolved to files; read once per lint run. */
const importsOf = new Map();

function resolveModule(from, specifier) {
  const base = resolve(dirname(from), specifier);
  return [`${base}.ts`, `${base}/index.ts`, base].find((candidate) => candidate.endsWith(".ts") && existsSync(candidate));
}

function relativeImports(file) {
  let found = importsOf.get(file);
  if (found) return found;
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  found = importedFiles.filter((i) => i.fileName.startsWith(".")).map((i) => resolveModule(file, i.fileName)).filter(Boolean);
  importsOf.set(file, found);
  return found;
}

/** A path of imports from `start` back to `target`, or undefined. */
function pathBack(start, target) {
  const seen = new Set();
  const walk = (file, path) => {
    if (file === target) return path;
    if (seen.has(file)) return undefined;
    seen.add(file);
    for (const next of relativeImports(file)) {
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]);
}

export const noImportCycle = {
  meta: { type: "problem", docs: { description: "refuse import cycles between files" }, schema: [] },
  create(context) {
    const file = context.filename;
    const check = (node) => {
      const specifier = node.source?.value;
      if (typeof specifier !== "string" || !specifier.startsWith(".")) return;
      const target = resolveModule(file, specifier);
      const cycle = target && pathBack(target, file);
      if (cycle) context.report({ node, message: `import cycle: ${[file, ...cycle].map((f) => relative(process.cwd(), f)).join(" -> ")}` });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};
