// The README's quick start, run as written: its ```js block (taken from README.md here, so the
// two cannot drift) is saved as a script in a directory outside the repository whose
// node_modules/@croupier/client is this package (what `npm install <path or tarball>` gives), and
// run with node against a real gateway and blackjack server (test/rig.ts). It must also be
// examples/quickstart.mjs, the command the demo prints.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import * as rig from "./rig.js";

const pkg = join(import.meta.dirname, "..", "..");

export function quickstart(): string {
    const readme = readFileSync(join(pkg, "README.md"), "utf8");
    const at = readme.indexOf("## Quick start");
    assert.ok(at >= 0, "README.md has a \"Quick start\" section");
    const m = /```js\n([\s\S]*?)```/.exec(readme.slice(at));
    assert.ok(m !== null, "the quick start has a ```js block");
    return m[1];
}

before(async () => {
    await rig.startRedis();
});
after(async () => {
    await rig.stopAll();
});

test("the README's quick start is examples/quickstart.mjs", () => {
    assert.equal(quickstart(), readFileSync(join(pkg, "examples", "quickstart.mjs"), "utf8"));
});

test("the README's quick start runs as written, outside the repository", async () => {
    /* a short turn: an insurance question the script answers wrongly times out soon */
    await rig.startGame("persistent", ["--bj-gap-ms", "100", "--bj-action-ms", "3000"]);
    const gate = await rig.startGate("sdk-quickstart");
    await rig.redis(rig.redisPort, "SET {croupier:money}:wallet:91 5000");
    const dir = mkdtempSync(join(tmpdir(), "croupier-quickstart-"));
    try {
        mkdirSync(join(dir, "node_modules", "@croupier"), { recursive: true });
        symlinkSync(pkg, join(dir, "node_modules", "@croupier", "client"), "dir");
        writeFileSync(join(dir, "package.json"), '{"type": "module", "private": true}\n');
        writeFileSync(join(dir, "quickstart.mjs"), quickstart());
        const out = await new Promise<string>((res, rej) => {
            execFile(process.execPath, ["quickstart.mjs", rig.url(gate), rig.token(91)],
                { cwd: dir, timeout: 30000 }, (err, stdout, stderr) =>
                    err ? rej(new Error(`${err.message}\n${stdout}\n${stderr}`)) : res(stdout));
        });
        const lines = out.trim().split("\n");
        assert.equal(lines[0], "player 91, wallet 5000 chips", out);
        assert.ok(lines.includes("bet 10"), out);
        /* the player's cards and the dealer's, decoded ("you: 10♥"), one face down */
        const card = /^(10|[2-9JQKA])[♣♦♥♠]$/;
        assert.ok(lines.filter((l) => l.startsWith("you: ") && card.test(l.slice(5))).length >= 2, out);
        assert.ok(lines.some((l) => l.startsWith("dealer: ") && card.test(l.slice(8))), out);
        assert.ok(lines.includes("dealer: a card face down"), out);
        const last = /^round over: ([+-]?\d+) chips$/.exec(lines[lines.length - 1]);
        assert.ok(last !== null, out);
        /* the round's result is in the wallet (the table's chips cashed out by the leave) */
        const want = 5000 + Number(last[1]);
        let wallet = 0;
        for (const end = Date.now() + 5000; Date.now() < end; await rig.sleep(50)) {
            wallet = Number((await rig.redis(rig.redisPort, "GET {croupier:money}:wallet:91")).split("\r\n")[1]);
            if (wallet === want)
                break;
        }
        assert.equal(wallet, want, out);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
