// Bundles the page (esbuild): src/main.ts with the SDK and its protobuf code into dist/app.js,
// beside dist/index.html and dist/style.css. Nothing built is committed. The SDK (clients/ts)
// must be built first (npm run build does it: its code is generated from proto/client.proto).
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
const out = join(root, "dist");
mkdirSync(out, { recursive: true });
await build({
    entryPoints: [join(root, "src", "main.ts")],
    outfile: join(out, "app.js"),
    bundle: true,
    format: "iife",
    platform: "browser", // the SDK's package.json "browser" leaves out `ws`: the page has WebSocket
    target: "es2020",
    sourcemap: true,
    minify: true,
    logLevel: "warning",
});
for (const f of ["index.html", "style.css"])
    copyFileSync(join(root, "src", f), join(out, f));
