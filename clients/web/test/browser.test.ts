// The browser table in headless Chromium (puppeteer-core, the system's /usr/bin/chromium) against
// a real redis-server, real croupier-game servers and four croupier-gate with --ws-listen, all on
// loopback (the SDK's test rig, clients/ts/test/rig.ts). One page logs in and plays a complete
// round of Dou Dizhu, hold'em and blackjack by clicking what a person would click; during each
// round the gateway the page is connected to gets SIGTERM (its four-step exit: GoAway, close
// 1001, graceful close) and the game server of the table drains (the real k8s/prestop.sh under
// busybox, then SIGTERM). The round must end settled (OUTCOME_COMPLETED) on the page, the page
// must say the connection was resumed and, once the round is over, that the table moved (a
// whole-table move to the server started beside it), and no error may be shown. Screenshots go
// to $CROUPIER_BUILD/web-test/.
import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import * as rig from "@croupier/client/dist/test/rig.js";
import puppeteer, { Browser, Page } from "puppeteer-core";

const SRC = join(import.meta.dirname, "..", "..", "..", "..");
const WEB = join(SRC, "clients", "web");
const SHOTS = join(rig.build, "web-test");
const CHROMIUM = process.env.CROUPIER_CHROMIUM ?? "/usr/bin/chromium";
const PLAYER = 91001;
const BOT_BASE = 92000;

/* Short gaps and quick server bots; turns long enough to survive a reconnect; the gateways'
 * request budgets of the e2e scripts (tests/e2e/lib.sh: a loaded 2-core machine, sanitizer
 * builds), so CPU starvation does not turn into DEADLINE_EXCEEDED. */
Object.assign(process.env, {
    CROUPIER_BUDGET_ACTION_MS: "1500", CROUPIER_BUDGET_JOIN_MS: "2500", CROUPIER_BUDGET_LEAVE_MS: "1500",
    CROUPIER_BUDGET_RESUME_MS: "2500",
    CROUPIER_TRAD_BOT_FILL_MS: "0", CROUPIER_TRAD_BOT_MS: "120", CROUPIER_TRAD_GAP_MS: "2500",
    CROUPIER_TRAD_ACTION_MS: "20000", CROUPIER_HOLDEM_GAP_MS: "2500", CROUPIER_HOLDEM_ACTION_MS: "20000",
    CROUPIER_HOLDEM_SEATS: "2", CROUPIER_BJ_BET_MS: "4000", CROUPIER_BJ_ACTION_MS: "20000",
    CROUPIER_BJ_GAP_MS: "2500",
});

let browser: Browser;
let page: Page;
let gates: rig.Proc[] = [];
let serve: ChildProcess;
let base = "";
const children: ChildProcess[] = [];
const pageErrors: string[] = [];

function waitLine(child: ChildProcess, re: RegExp, ms: number): Promise<string> {
    return new Promise((res, rej) => {
        let buf = "";
        const t = setTimeout(() => rej(new Error(`no ${re} within ${ms} ms: ${buf}`)), ms);
        child.stdout?.on("data", (d) => {
            buf += d.toString();
            const m = re.exec(buf);
            if (m) {
                clearTimeout(t);
                res(m[1]);
            }
        });
    });
}

function exited(child: ChildProcess, ms: number): Promise<number | null> {
    if (child.exitCode !== null)
        return Promise.resolve(child.exitCode);
    return new Promise((res) => {
        const t = setTimeout(() => res(null), ms);
        child.once("exit", (code) => {
            clearTimeout(t);
            res(code);
        });
    });
}

before(async () => {
    await rig.startRedis();
    await rig.redis(rig.redisPort, "SET {croupier:money}:wallet:house-traditional 100000000");
    await rig.seedWallet(PLAYER);
    for (let i = 1; i <= 4; i++)
        gates.push(await rig.startGate(`web-g${i}`));
    /* The demo's way (docs/demo.md "The browser table"): /ws forwarded to the gateways of a file,
     * the token in /config.json; the last test uses it, the others name the gateways. */
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(join(SHOTS, "ws-gateways"), `127.0.0.1:${gates[3].ws}\n`);
    await rig.seedWallet(PLAYER + 1);
    writeFileSync(join(SHOTS, "config.json"), JSON.stringify({ token: rig.token(PLAYER + 1, 3600) }));
    serve = spawn(process.execPath, [join(WEB, "serve.mjs"), "--listen", "127.0.0.1:0",
        "--root", join(WEB, "dist"), "--gateways-file", join(SHOTS, "ws-gateways"),
        "--config", join(SHOTS, "config.json")], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(serve);
    base = await waitLine(serve, /serving (http:\S+)/, 5000);
    browser = await puppeteer.launch({
        executablePath: CHROMIUM, headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    page = await browser.newPage();
    await page.setViewport({ width: 1000, height: 900 });
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("console", (m) => {
        if (m.type() === "error")
            console.error(`# page console: ${m.text()}`);
    });
    const gw = gates.map(rig.url).join(",");
    await page.goto(`${base}?token=${encodeURIComponent(rig.token(PLAYER, 3600))}&gw=${encodeURIComponent(gw)}`);
});

after(async () => {
    await browser?.close();
    for (const c of children)
        if (c.exitCode === null)
            c.kill("SIGTERM");
    await Promise.all(children.map((c) => exited(c, 15000)));
    await rig.stopAll();
});

async function shot(name: string): Promise<void> {
    writeFileSync(join(SHOTS, `${name}.png`), await page.screenshot({ fullPage: true }));
}

async function visible(sel: string): Promise<boolean> {
    return page.$eval(sel, (e) => !(e as HTMLElement).hidden).catch(() => false);
}

async function count(sel: string): Promise<number> {
    return page.$$eval(sel, (l) => l.length);
}

/* What is shown as an error: the error banner, and refused moves (none is expected). */
async function assertNoError(): Promise<void> {
    const banner = await page.$eval("#error", (e) => ((e as HTMLElement).hidden ? "" : e.textContent ?? ""));
    assert.equal(banner, "", "the page shows an error");
    const refused = await page.$$eval(".note.refusal", (l) => l.map((e) => e.textContent));
    assert.deepEqual(refused, [], "the page shows refused moves");
    assert.deepEqual(pageErrors, [], "the page threw");
}

/* Clicks the first enabled action among moves; true when one was clicked. */
async function click(...moves: string[]): Promise<boolean> {
    for (const m of moves) {
        const b = await page.$(`#actions button[data-move="${m}"]:not([disabled])`);
        if (b !== null) {
            await b.click().catch(() => {}); /* redrawn meanwhile: the next round of play tells */
            return true;
        }
    }
    return false;
}

/* Whether the page waits for our move: our turn, no move or refresh on its way. */
async function ready(): Promise<boolean> {
    return page.$eval("#actions", (e) => (e as HTMLElement).dataset.ready === "true").catch(() => false);
}

/* One move of a simple player, when it is the page's turn: Dou Dizhu bids 3 (so it leads), leads
 * its lowest card and passes when it may; hold'em checks or calls; blackjack bets the minimum,
 * declines insurance and stands. */
async function playOnce(game: string): Promise<void> {
    if (!(await ready()))
        return;
    if (game === "doudizhu") {
        if (await click("bid-3", "bid-0", "pass"))
            return;
        /* leading (a pass is not allowed): the lowest card */
        const card = await page.$("#hand .card");
        if (card !== null && (await count("#hand .card.selected")) === 0)
            await card.click().catch(() => {});
        if (await ready())
            await click("play");
    } else if (game === "holdem") {
        await click("check", "call");
    } else {
        await click("bet", "no-insurance", "stand");
    }
}

/* Plays (every 100 ms) until stop() is called. */
function autoplay(game: string): { stop: () => Promise<void> } {
    let on = true;
    const loop = (async () => {
        while (on) {
            await playOnce(game);
            await rig.sleep(100);
        }
    })();
    return { stop: async () => { on = false; await loop; } };
}

async function until(what: string, ms: number, cond: () => Promise<boolean>): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
        if (await cond())
            return;
        await rig.sleep(100);
    }
    await shot(`timeout-${what.replace(/\W+/g, "-")}`);
    throw new Error(`${what}: not within ${ms} ms`);
}

/* The real preStop hook, then SIGTERM, as kubelet does (tests/e2e/lib.sh e2e_pod_terminate). */
async function terminateGame(p: rig.Proc): Promise<number | null> {
    const hook = spawn("busybox", ["sh", join(SRC, "k8s", "prestop.sh")], { stdio: "ignore",
        env: { ...process.env, HEALTH_PORT: String(p.health), DRAIN_MAX_SECONDS: "20" } });
    await exited(hook, 25000);
    p.child.kill("SIGTERM");
    return rig.exited(p, 15000);
}

const GAMES = [
    /* our turn in the deal: to bid (the bidding) or to play */
    { game: "doudizhu", engine: "traditional", inRound: "#actions button[data-move=play], #actions button[data-move=bid-0]" },
    { game: "holdem", engine: "holdem", inRound: "#actions button[data-move=call]" },
    { game: "blackjack", engine: "persistent", inRound: "#actions button[data-move=hit]:not([disabled])" },
];

test("log in with a token", async () => {
    await page.click("#login-button");
    await until("the lobby", 10000, () => visible("#lobby"));
    assert.match(await page.$eval("#status", (e) => e.textContent ?? ""), new RegExp(`player ${PLAYER}`));
    await shot("0-lobby");
    await assertNoError();
});

GAMES.forEach(({ game, engine, inRound }, i) => {
    test(`${game}: a round through a gateway SIGTERM and a game-server drain`, async () => {
        try {
            await playRound(game, engine, inRound, i);
        } catch (e) {
            await shot(`fail-${i + 1}-${game}`).catch(() => {});
            const notes = await page.$$eval("#notes li", (l) => l.map((x) => x.textContent)).catch(() => []);
            console.error(`# ${game} failed; the page's notes, newest first:\n# ${notes.join("\n# ")}`);
            throw e;
        }
    });
});

async function playRound(game: string, engine: string, inRound: string, i: number): Promise<void> {
    const first = await rig.startGame(engine);
    let bots: ChildProcess | null = null;
    if (game === "holdem") {
        /* the other seat of the 2-seat table: a croupier-bot, on the gateway never stopped */
        await rig.seedWallet(BOT_BASE);
        bots = spawn(join(rig.build, "bots", "croupier-bot"), ["--gateways",
            `127.0.0.1:${gates[3].port}`, "--bots", "1", "--game", "holdem", "--seconds", "600",
            "--player-base", String(BOT_BASE), "--token-secret-file", rig.secretFile(),
            "--report", "/dev/null", "--progress-ms", "0"], { stdio: "ignore" });
        children.push(bots);
        await until("the bot's table", 10000, async () =>
            (await rig.redis(rig.redisPort, `EXISTS {croupier:seat}:${BOT_BASE}`)).startsWith(":1"));
    }
    const reconnects = await count(".note.reconnected"), moves = await count(".note.moved");
    await page.click(`#games button[data-game="${game}"]`);
    await until("the table", 10000, () => visible("#table"));
    /* Play up to our turn in a round, and leave that turn open: the gateway rolls and the
     * server drains while the round waits for us. */
    const ourTurn = async () => (await page.$(inRound)) !== null &&
        (await page.$eval("#actions", (e) => (e as HTMLElement).dataset.mine === "true"));
    await until("our turn in a round", 30000, async () => {
        if (await ourTurn())
            return true;
        await playOnce(game);
        return false;
    });
    const play = { stop: async () => {} };
    try {
        const round = await page.$eval("#table", (e) => (e as HTMLElement).dataset.round ?? "");
        assert.notEqual(round, "", "the round has an id");
        assert.ok((await count("#mine .card")) > 0, "our cards are drawn");
        assert.match(await page.$eval("#timer", (e) => e.textContent ?? ""), /Your turn · \d+\.\d s/);
        await shot(`${i + 1}-${game}-turn`);
        /* The gateway the page is on rolls; the table's server drains, a second one beside it. */
        const second = await rig.startGame(engine);
        const url = await page.$eval("#status", (e) => (e as HTMLElement).dataset.url ?? "");
        const gate = gates.find((g) => rig.url(g) === url);
        assert.ok(gate !== undefined, `the page is on ${url}, a gateway of this test`);
        gate.child.kill("SIGTERM");
        const drained = terminateGame(first);
        await until("the reconnect note", 15000, async () => (await count(".note.reconnected")) > reconnects);
        await until("our turn still, after the reconnect", 5000, ourTurn);
        Object.assign(play, autoplay(game));
        await until("the round's end", 30000, async () =>
            (await count(`.note.round[data-round="${round}"]`)) > 0);
        assert.equal(await page.$eval(`.note.round[data-round="${round}"]`,
            (e) => (e as HTMLElement).dataset.outcome), "COMPLETED");
        /* notes are newest first: the round ended after the reconnect */
        assert.ok(await page.$eval(`.note.round[data-round="${round}"]`, (e) =>
            [...e.parentElement!.children].indexOf(e) <
            [...e.parentElement!.children].findIndex((x) => x.classList.contains("reconnected"))),
            "the round ended after the connection was resumed");
        await shot(`${i + 1}-${game}-result`);
        await until("the moved note", 20000, async () => (await count(".note.moved")) > moves);
        assert.equal(await rig.exited(gate, 10000), 0, "the gateway exited 0");
        assert.equal(await drained, 0, "the drained game server exited 0");
        await assertNoError();
        await shot(`${i + 1}-${game}-moved`);
        /* Leave: at once, or at the end of a round begun at the new server meanwhile (the
         * page plays it out). */
        await page.click("#leave");
        await until("the lobby", 40000, () => visible("#lobby"));
        await play.stop();
        assert.ok((await rig.redis(rig.redisPort, `EXISTS {croupier:seat}:${PLAYER}`)).startsWith(":0"),
                  "the seat is given up");
        await assertNoError();
        if (bots !== null) {
            bots.kill("SIGTERM");
            await exited(bots, 20000);
        }
        second.child.kill("SIGTERM");
        assert.equal(await rig.exited(second, 20000), 0, "the second game server exited 0");
    } finally {
        await play.stop();
    }
}

test("the demo's server: the token from /config.json, /ws forwarded to a live gateway", async () => {
    const p = await browser.newPage();
    try {
        p.on("pageerror", (e) => pageErrors.push(String(e)));
        await p.goto(base);
        await p.waitForFunction(() => (document.getElementById("token") as HTMLInputElement).value !== "");
        assert.equal(await p.$eval("#gateways", (e) => (e as HTMLInputElement).value),
                     base.replace(/^http/, "ws") + "ws");
        await p.click("#login-button");
        await p.waitForFunction(() => !document.getElementById("lobby")!.hidden, { timeout: 10000 });
        assert.match(await p.$eval("#status", (e) => e.textContent ?? ""), new RegExp(`player ${PLAYER + 1}`));
        /* the lobby's table list came through the forwarded connection */
        await p.waitForSelector("#games button[data-game=doudizhu]");
        assert.deepEqual(pageErrors, []);
    } finally {
        await p.close();
    }
});
