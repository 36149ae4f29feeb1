// Generates the protobuf code of proto/client.proto at build time (nothing generated is
// committed): gen/client.js (protobufjs static module, ES module) and gen/client.d.ts (its
// types), and copies both to dist/gen/ beside the compiled sources that import them.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const proto = join(root, "..", "..", "proto", "client.proto");
const bin = (name) => join(root, "node_modules", ".bin", name);
mkdirSync(join(root, "gen"), { recursive: true });
mkdirSync(join(root, "dist", "gen"), { recursive: true });
const js = join(root, "gen", "client.js");
execFileSync(bin("pbjs"), ["-t", "static-module", "-w", "es6", "--force-number", "-o", js, proto],
    { stdio: "inherit" });
// Node's ES module loader needs the file name (protobufjs has no export map for "minimal"),
// and the CommonJS module's object as the default import.
writeFileSync(js, readFileSync(js, "utf8").replace('import * as $protobuf from "protobufjs/minimal";',
    'import $protobuf from "protobufjs/minimal.js";'));
execFileSync(bin("pbts"), ["-o", join(root, "gen", "client.d.ts"), js], { stdio: "inherit" });
for (const f of ["client.js", "client.d.ts"])
    copyFileSync(join(root, "gen", f), join(root, "dist", "gen", f));
