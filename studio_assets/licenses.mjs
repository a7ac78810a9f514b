// Write the licence of every npm package that esbuild put into the bundle.
// Usage: node licenses.mjs meta.json OUT.txt  (meta.json from esbuild --metafile)
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [metaPath, outPath] = process.argv.slice(2);
const meta = JSON.parse(readFileSync(metaPath, "utf8"));
const packages = new Set();
// Only what reached the output: the inputs esbuild tree-shook away are not shipped.
const used = Object.values(meta.outputs).flatMap((o) =>
  Object.entries(o.inputs).filter(([, v]) => v.bytesInOutput > 0).map(([k]) => k));
for (const input of used) {
  const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (match) packages.add(match[1]);
}
const sections = [
  "Insika Studio editor bundle (editor.js): third-party software it contains.",
  "Built from these npm packages by studio_assets/build.sh with esbuild.",
  "",
];
for (const name of [...packages].sort()) {
  const dir = join("node_modules", name);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
  if (!file) throw new Error(`${name} has no licence file`);
  sections.push("=".repeat(78), `${name} ${pkg.version} (${pkg.license})`, "=".repeat(78),
    readFileSync(join(dir, file), "utf8").trim(), "");
}
writeFileSync(outPath, sections.join("\n"));
console.log(`${packages.size} packages: ${[...packages].sort().join(", ")}`);
