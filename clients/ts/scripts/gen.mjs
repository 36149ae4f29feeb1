// Generates the protobuf code of proto/client.proto and of the games' own messages
// (GAME_PROTOS: the bodies of Action.game, Snapshot.game_state and ServerMessage.game_event,
// docs/protocol.md "Games on the table kit: ENGINE_GAME") at build time (nothing generated is
// committed): gen/client.js (protobufjs static module, ES module) and gen/client.d.ts (its
// types), and copies both to dist/gen/ beside the compiled sources that import them. The
// games' messages sit in their proto packages under the one `croupier` namespace
// (`croupier.zjh.ZjhAction`, `croupier.niuniu.NiuState`): one module, because the generated
// code finds its nested types through protobufjs' shared root object, which two separately
// generated modules of the package `croupier` would each overwrite.
//
// 64-bit integers (README "64-bit integers"): protobufjs decodes them as `Long` objects (and
// gives absent fields a `Long` zero, an object that tests true). The decoders are rewritten
// here so that the ids with high bits set (`BIGINT_FIELDS`: a desk id carries the server's
// worker in its top byte, a session id is random) arrive as `bigint`, and every other 64-bit
// field (chips, stakes, amounts, player ids, request ids, sequence numbers, times in ms) as a
// `number`; absent fields default to 0 / 0n.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const BIGINT_FIELDS = ["deskId", "sessionId"];
/* Relative to the repository's root. */
export const GAME_PROTOS = ["games/zhajinhua/zhajinhua.proto", "games/niuniu/niuniu.proto"];

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(root, "..", "..");
const protos = [join(repo, "proto", "client.proto"), ...GAME_PROTOS.map((p) => join(repo, p))];
const bin = (name) => join(root, "node_modules", ".bin", name);
mkdirSync(join(root, "gen"), { recursive: true });
mkdirSync(join(root, "dist", "gen"), { recursive: true });
const js = join(root, "gen", "client.js");
const dts = join(root, "gen", "client.d.ts");
execFileSync(bin("pbjs"), ["-t", "static-module", "-w", "es6", "--force-number", "-o", js, ...protos],
    { stdio: "inherit" });

function replaceAll(text, re, fn, what) {
    let n = 0;
    const out = text.replace(re, (...m) => {
        n++;
        return fn(...m);
    });
    if (n === 0)
        throw new Error(`gen.mjs: no ${what} found in the generated code (protobufjs changed?)`);
    return out;
}

let code = readFileSync(js, "utf8");
// Node's ES module loader needs the file name (protobufjs has no export map for "minimal"),
// and the CommonJS module's object as the default import.
code = code.replace('import * as $protobuf from "protobufjs/minimal";',
    'import $protobuf from "protobufjs/minimal.js";\n' +
    "const $num = (v) => (typeof v === \"number\" ? v : v.toNumber());\n" +
    "const $big = (v) => (typeof v === \"number\" ? BigInt(v) : v.toBigInt());");
const LONG = "(u?int64|sint64|s?fixed64)";
code = replaceAll(code, new RegExp(`message\\.(\\w+) = reader\\.${LONG}\\(\\);`, "g"),
    (_, f, t) => `message.${f} = ${BIGINT_FIELDS.includes(f) ? "$big" : "$num"}(reader.${t}());`,
    "64-bit decoder");
code = replaceAll(code, /(\w+)\.prototype\.(\w+) = \$util\.Long \? \$util\.Long\.fromBits\(0,0,(true|false)\) : 0;/g,
    (_, m, f) => `${m}.prototype.${f} = ${BIGINT_FIELDS.includes(f) ? "BigInt(0)" : "0"};`,
    "64-bit default");
// A bigint is written through its decimal string (protobufjs takes a string for a 64-bit value).
code = replaceAll(code, new RegExp(`\\.${LONG}\\(message\\.(${BIGINT_FIELDS.join("|")})\\);`, "g"),
    (_, t, f) => `.${t}(String(message.${f}));`, "64-bit encoder");
// fromObject: a 64-bit value given as a number, a string, a bigint or a Long object.
code = replaceAll(code, /message\.(\w+) = \$util\.Long\.fromValue\(object\.(\w+), (true|false)\);/g,
    (_, f, g, u) => BIGINT_FIELDS.includes(f)
        ? `message.${f} = BigInt(typeof object.${g} === "object" ? $util.Long.fromValue(object.${g}, ${u}).toString() : object.${g});`
        : `message.${f} = $num($util.Long.fromValue(typeof object.${g} === "bigint" ? String(object.${g}) : object.${g}, ${u}));`,
    "64-bit fromObject");
// toObject: a bigint field takes the path of a plain value (String(), or itself).
code = replaceAll(code, new RegExp(`typeof message\\.(${BIGINT_FIELDS.join("|")}) === "number"`, "g"),
    (_, f) => `typeof message.${f} !== "object"`, "64-bit toObject");
if (/reader\.(u?int64|sint64|s?fixed64)\(\)(?!\))/.test(code.replace(/\$(num|big)\(reader\.\w+\(\)\)/g, "")))
    throw new Error("gen.mjs: a 64-bit decoder left unconverted (a repeated field?)");
writeFileSync(js, code);
execFileSync(bin("pbts"), ["-o", dts, js], { stdio: "inherit" });
let types = readFileSync(dts, "utf8");
// (an optional field of an interface is written "(number|null)": Watch.deskId, TableClosing.deskId)
for (const f of BIGINT_FIELDS)
    types = replaceAll(types, new RegExp(`(\\b${f}\\??: )(?:number(\\|null)?|\\(number\\|null\\));`, "g"),
        (m, head, nul) => (m.endsWith("(number|null);") ? `${head}(bigint|null);` : `${head}bigint${nul ?? ""};`),
        `${f} type`);
writeFileSync(dts, types);
for (const f of ["client.js", "client.d.ts"])
    copyFileSync(join(root, "gen", f), join(root, "dist", "gen", f));
