// The browser table in headless Chromium (puppeteer-core, the system's /usr/bin/chromium) against
// a real redis-server, real croupier-game servers and four croupier-gate with --ws-listen, all on
// loopback (the SDK's test rig, clients/ts/test/rig.ts). One page logs in and plays a complete
// round of every game it offers (Dou Dizhu, hold'em, blackjack, Zha Jin Hua, Run Fast, Big Two)
// by clicking what a person would click; during each round the gateway the page is connected to
// gets SIGTERM (its four-step exit: GoAway, close 1001, graceful close) and the game server of
// the table drains (the real k8s/prestop.sh under busybox, then SIGTERM). The round must end
// settled (OUTCOME_COMPLETED) on the page, the page must say the connection was resumed and,
// once the round is over, that the table moved (a whole-table move to the server started beside
// it), and no error may be shown. The page is checked as drawn, at 1280x800 and at a phone's
// 390x844: nothing outside the viewport horizontally, no seat or button over another, every card
// an SVG, no raw desk id in its text, no action button enabled out of the person's turn or after
// leaving. Screenshots go to $CROUPIER_BUILD/web-test/.
import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import * as rig from "@croupier/client/dist/test/rig.js";
import type { Browser, Page } from "puppeteer-core";

import { layoutProblems as pageLayoutProblems } from "./layout.js";
import { DESKTOP, PHONE, SHOTS, exited, launchBrowser, serveDist, terminateGame } from "./procs.js";

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
    CROUPIER_BJ_GAP_MS: "2500", CROUPIER_ZHAJINHUA_SEATS: "2", CROUPIER_ZHAJINHUA_ACTION_MS: "20000",
    CROUPIER_ZHAJINHUA_GAP_MS: "2500", CROUPIER_ZHAJINHUA_MAX_ROUNDS: "4",
});

let browser: Browser;
let page: Page;
let gates: rig.Proc[] = [];
let base = "";
const children: ChildProcess[] = [];
const pageErrors: string[] = [];
const violations: string[] = []; /* action buttons enabled out of the person's turn */

before(async () => {
    await rig.startRedis();
    await rig.redis(rig.redisPort, "SET {croupier:money}:wallet:house-traditional 100000000");
    await rig.seedWallet(PLAYER);
    /* One gateway per game, SIGTERMed during its round (the page then moves on to the next one
     * of its list), and a last one never stopped: the croupier-bots' and the demo server's. */
    for (let i = 1; i <= GAMES.length + 1; i++)
        gates.push(await rig.startGate(`web-g${i}`));
    /* The demo's way (docs/demo.md "The browser table"): /ws forwarded to the gateways of a file,
     * the token in /config.json; the last test uses it, the others name the gateways. */
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(join(SHOTS, "ws-gateways"), `127.0.0.1:${gates[GAMES.length].ws}\n`);
    await rig.seedWallet(PLAYER + 1);
    writeFileSync(join(SHOTS, "config.json"), JSON.stringify({ token: rig.token(PLAYER + 1, 3600) }));
    base = await serveDist(children, ["--gateways-file", join(SHOTS, "ws-gateways"),
        "--config", join(SHOTS, "config.json")]);
    browser = await launchBrowser();
    page = await browser.newPage();
    await page.setViewport(DESKTOP);
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
    assert.deepEqual(violations, [], "action buttons were enabled out of the person's turn");
}

async function layoutProblems(): Promise<string[]> {
    return pageLayoutProblems(page);
}

/* The page at the desktop's and the phone's sizes: checked, and a screenshot of each. */
async function checkLayout(name: string): Promise<void> {
    for (const [size, vp] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
        await page.setViewport(vp);
        const problems = await layoutProblems();
        await shot(`${name}-${size}`);
        assert.deepEqual(problems, [], `the page at ${vp.width}x${vp.height} (${name})`);
    }
    await page.setViewport(DESKTOP);
}

/* Out of the person's turn no action button may be enabled (a look at one's own cards in Zha
 * Jin Hua excepted: it is allowed any time, docs/rules/zhajinhua.md "Actions"). */
async function checkDisabled(): Promise<void> {
    const bad = await page.evaluate(() => {
        const a = document.getElementById("actions")!;
        if (a.dataset.mine === "true")
            return [];
        return [...a.querySelectorAll<HTMLButtonElement>("button:not([disabled])")]
            .filter((b) => b.dataset.move !== "look").map((b) => b.dataset.move ?? "?");
    }).catch(() => []);
    if (bad.length > 0)
        violations.push(`enabled out of turn: ${bad.join(", ")}`);
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

/* Clicks a card of the hand by its code, near its top-left corner: in a long hand the cards
 * overlap, and only the corner index of each shows. */
async function clickCard(code: number): Promise<void> {
    const c = await page.$(`#hand svg.card[data-code="${code}"]`);
    await c?.click({ offset: { x: 6, y: 24 } }).catch(() => {});
}

/* The shedding games' strength of a rank (docs/rules/doudizhu.md, runfast.md, bigtwo.md): 3 low
 * ... A, 2, the jokers; Big Two's singles then by suit, diamonds lowest. */
const rankValue = (code: number) => (code >> 2 === 2 ? 15 : code >> 2 === 15 ? 16 + (code & 3) : code >> 2);
const bigTwoValue = (code: number) => rankValue(code) * 4 + [1, 0, 2, 3][code & 3];

/* Run Fast's move to beat, when the hand can (it must: "Must beat when able",
 * docs/rules/runfast.md): the same type and length with a higher main rank, else a bomb. */
function runFastBeat(hand: number[], beat: number[]): number[] | null {
    const by = new Map<number, number[]>();
    for (const c of [...hand].sort((a, b) => rankValue(a) - rankValue(b)))
        by.set(rankValue(c), [...(by.get(rankValue(c)) ?? []), c]);
    const tb = new Map<number, number>();
    for (const c of beat)
        tb.set(rankValue(c), (tb.get(rankValue(c)) ?? 0) + 1);
    const ranks = [...tb.keys()].sort((a, b) => a - b);
    const n = beat.length;
    const run = (rs: number[]) => rs.every((r, i) => i === 0 || r === rs[i - 1] + 1);
    const take = (r: number, k: number) => ((by.get(r) ?? []).length >= k ? by.get(r)!.slice(0, k) : null);
    const chain = (lo: number, len: number, k: number): number[] | null => {
        const out: number[] = [];
        for (let r = lo; r < lo + len; r++) {
            const t = r > 14 ? null : take(r, k);
            if (t === null)
                return null;
            out.push(...t);
        }
        return out;
    };
    const bombs = [...by.keys()].filter((r) => by.get(r)!.length === 4).sort((a, b) => a - b);
    let found: number[] | null = null;
    if (n === 4 && ranks.length === 1) {
        const b = bombs.find((r) => r > ranks[0]);
        return b === undefined ? null : by.get(b)!;
    }
    if (n === 1 || (n === 2 && ranks.length === 1)) {
        for (const r of [...by.keys()].sort((a, b) => a - b))
            if (r > ranks[0] && (found = take(r, n)) !== null)
                break;
    } else if (ranks.every((r) => tb.get(r) === 1) && run(ranks)) {
        for (let lo = ranks[0] + 1; lo + n - 1 <= 14 && found === null; lo++)
            found = chain(lo, n, 1);
    } else if (ranks.every((r) => tb.get(r) === 2) && run(ranks)) {
        for (let lo = ranks[0] + 1; lo + n / 2 - 1 <= 14 && found === null; lo++)
            found = chain(lo, n / 2, 2);
    } else {
        /* a trio with two, or an airplane: the longest chain of trios (then the highest) */
        const trios = ranks.filter((r) => tb.get(r)! >= 3);
        let best = { lo: 0, len: 0 };
        for (let i = 0; i < trios.length; i++) {
            let j = i;
            while (j + 1 < trios.length && trios[j + 1] === trios[j] + 1)
                j++;
            if (j - i + 1 >= best.len)
                best = { lo: trios[i], len: j - i + 1 };
        }
        for (let lo = best.lo + 1; best.len > 0 && lo + best.len - 1 <= (best.len > 1 ? 14 : 15) && found === null; lo++) {
            const main = chain(lo, best.len, 3);
            if (main === null)
                continue;
            const rest = hand.filter((c) => !main.includes(c)).sort((a, b) => rankValue(a) - rankValue(b))
                .filter((c) => rankValue(c) < lo || rankValue(c) >= lo + best.len);
            if (rest.length >= n - main.length)
                found = [...main, ...rest.slice(0, n - main.length)];
        }
    }
    if (found === null && bombs.length > 0)
        found = by.get(bombs[0])!;
    return found;
}

/* Guandan's tribute (docs/rules/guandan.md "Tribute and return tribute"), the hand in the page's
 * order (the game's, level cards above the aces): pay the strongest card, a wild heart
 * excepted; return the lowest card of rank 10 or lower, else the lowest. */
function guandanTribute(hand: number[], wild: number[], back: boolean): number {
    if (back)
        return hand.find((c) => c >> 2 <= 10) ?? hand[0];
    return [...hand].reverse().find((c) => !wild.includes(c)) ?? hand[hand.length - 1];
}

/* The cards a simple player plays in a shedding game now (null: pass): leading, the opening
 * card of the deal when it holds it (Run Fast's 3♠, Big Two's 3♦), else its lowest card; to
 * beat, Run Fast must when able, Big Two beats a single with its lowest higher single, Dou Dizhu
 * passes. */
function sheddingMove(game: string, hand: number[], beat: number[], leading: boolean): number[] | null {
    const value = game === "bigtwo" ? bigTwoValue : (c: number) => rankValue(c) * 4 + (c & 3);
    const sorted = [...hand].sort((a, b) => value(a) - value(b));
    if (leading && game === "guandan")
        return [hand[0]]; /* the page draws the hand in Guandan's order, which its level sets */
    if (leading) {
        const opening = game === "runfast" ? (3 << 2 | 3) : game === "bigtwo" ? (3 << 2 | 1) : -1;
        return [hand.includes(opening) ? opening : sorted[0]];
    }
    if (game === "runfast")
        return runFastBeat(hand, beat);
    if (game === "bigtwo" && beat.length === 1) {
        const c = sorted.find((x) => value(x) > value(beat[0]));
        return c === undefined ? null : [c];
    }
    return null;
}

/* Whether the page waits for our move: our turn, no move or refresh on its way. */
async function ready(): Promise<boolean> {
    return page.$eval("#actions", (e) => (e as HTMLElement).dataset.ready === "true").catch(() => false);
}

/* One move of a simple player, when it is the page's turn: in the shedding games it bids 3 (Dou
 * Dizhu, so it leads) and plays sheddingMove(); hold'em checks or calls; blackjack bets the
 * minimum, declines insurance and stands; Zha Jin Hua looks at its cards, then calls; Niu Niu
 * bids ×1 for the banker, bets 1 stake (a punter) and shows. */
async function playOnce(game: string): Promise<void> {
    await checkDisabled();
    if (!(await ready()))
        return;
    if (game === "doudizhu" || game === "runfast" || game === "bigtwo" || game === "guandan") {
        if (await click("bid-3", "bid-0"))
            return;
        const state = await page.evaluate(() => ({
            hand: [...document.querySelectorAll<SVGElement>("#hand svg.card")].map((c) => Number(c.dataset.code)),
            picked: [...document.querySelectorAll<SVGElement>("#hand svg.card.selected")].map((c) => Number(c.dataset.code)),
            beat: [...document.querySelectorAll<SVGElement>("#center .last-play svg.card")].map((c) => Number(c.dataset.code)),
            leading: document.getElementById("actions")!.dataset.leading === "true",
            tribute: document.getElementById("actions")!.dataset.tribute ?? "",
            wild: [...document.querySelectorAll<SVGElement>("#hand svg.card.wild")].map((c) => Number(c.dataset.code)),
        })).catch(() => null);
        if (state === null || state.hand.length === 0)
            return;
        const move = state.tribute !== "" ? [guandanTribute(state.hand, state.wild, state.tribute === "return")]
            : sheddingMove(game, state.hand, state.leading ? [] : state.beat, state.leading);
        if (move === null) {
            await click("pass");
            return;
        }
        for (const c of state.picked.filter((x) => !move.includes(x)))
            await clickCard(c);
        for (const c of move.filter((x) => !state.picked.includes(x)))
            await clickCard(c);
        const picked = await page.$$eval("#hand svg.card.selected", (l) =>
            l.map((c) => Number((c as SVGElement).dataset.code)).sort((a, b) => a - b));
        if (await ready() && JSON.stringify(picked) === JSON.stringify([...move].sort((a, b) => a - b)))
            await click("play", "give");
    } else if (game === "holdem") {
        await click("check", "call");
    } else if (game === "zhajinhua") {
        await click("look", "call"); /* looks at its cards once (docs/rules/zhajinhua.md), then calls */
    } else if (game === "niuniu") {
        await click("bid-1", "bet-1", "show"); /* one decision per window (docs/rules/niuniu.md) */
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

/* Each game: its engine, what shows that it is our turn in a round, the croupier-bot playing the
 * other seat (null: server bots or the house), and whether the page sits alone first (the
 * waiting state is checked, then the bot comes). */
const SHED_TURN = "#actions button[data-move=play], #actions button[data-move=bid-0]";
const NIU_TURN = ["bid-0", "bet-1", "show"].map((m) => `#actions button[data-move=${m}]:not([disabled])`).join(", ");
const GAMES = [
    /* our turn in the deal: to bid (the bidding) or to play */
    { game: "doudizhu", engine: "traditional", inRound: SHED_TURN, bot: null, alone: false },
    { game: "holdem", engine: "holdem", inRound: "#actions button[data-move=call]", bot: "holdem", alone: true },
    { game: "blackjack", engine: "persistent", inRound: "#actions button[data-move=hit]:not([disabled])", bot: null, alone: false },
    { game: "zhajinhua", engine: "zhajinhua", inRound: "#actions button[data-move=call]:not([disabled])", bot: "zhajinhua", alone: true },
    /* Niu Niu: our decision in any of its windows (bid, bet, show), everyone's at once; windows
     * of 15 s (Zha Jin Hua's turn) so ours is still open after the reconnect */
    { game: "niuniu", engine: "niuniu", inRound: NIU_TURN, bot: "niuniu", alone: true,
      env: { CROUPIER_NIUNIU_ACTION_MS: "15000" } as Record<string, string> },
    { game: "runfast", engine: "traditional", inRound: SHED_TURN, bot: null, alone: false },
    { game: "bigtwo", engine: "traditional", inRound: SHED_TURN, bot: null, alone: false },
    /* server bots quicker than elsewhere: a Guandan deal has 108 cards */
    { game: "guandan", engine: "traditional", inRound: SHED_TURN, bot: null, alone: false,
      env: { CROUPIER_TRAD_BOT_MS: "40" } as Record<string, string> },
];

/* Types text into an input in place of what it held. */
async function typeInto(sel: string, text: string): Promise<void> {
    await page.$eval(sel, (e) => { (e as HTMLInputElement).value = ""; });
    await page.type(sel, text);
}

const errorText = () => page.$eval("#error", (e) => ((e as HTMLElement).hidden ? "" : e.textContent ?? ""));

test("log in with a token", async () => {
    /* bad input is refused with a message, nothing sent */
    const gw = await page.$eval("#gateways", (e) => (e as HTMLInputElement).value);
    await typeInto("#gateways", "127.0.0.1:1");
    await page.click("#login-button");
    assert.match(await errorText(), /ws:\/\/ or wss:\/\/.*not 127\.0\.0\.1:1/);
    await typeInto("#gateways", gw);
    await page.click("#login-button");
    await until("the lobby", 10000, () => visible("#lobby"));
    assert.match(await page.$eval("#status", (e) => e.textContent ?? ""), new RegExp(`player ${PLAYER}`));
    await typeInto("#stake", "0");
    await page.click('#games button[data-game="doudizhu"]');
    assert.match(await errorText(), /stake must be a whole number of chips, 1 or more/);
    assert.equal(await visible("#lobby"), true, "no join with a bad stake");
    await typeInto("#stake", "10");
    await checkLayout("0-lobby");
});

GAMES.forEach(({ game, engine, inRound, bot, alone, ...rest }, i) => {
    test(`${game}: a round through a gateway SIGTERM and a game-server drain`, async () => {
        const env: Record<string, string> = ("env" in rest ? rest.env : undefined) ?? {};
        const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
        Object.assign(process.env, env); /* the game servers this round starts */
        try {
            await playRound(game, engine, inRound, bot, alone, i);
        } catch (e) {
            await shot(`fail-${i + 1}-${game}`).catch(() => {});
            const notes = await page.$$eval("#notes li", (l) => l.map((x) => x.textContent)).catch(() => []);
            console.error(`# ${game} failed; the page's notes, newest first:\n# ${notes.join("\n# ")}`);
            throw e;
        } finally {
            for (const [k, v] of Object.entries(saved))
                if (v === undefined)
                    delete process.env[k];
                else
                    process.env[k] = v;
        }
    });
});

async function playRound(game: string, engine: string, inRound: string, bot: string | null,
                         alone: boolean, i: number): Promise<void> {
    const first = await rig.startGame(engine);
    let bots: ChildProcess | null = null;
    const botPlayer = BOT_BASE + i;
    /* the other seat of the 2-seat table: a croupier-bot, on the gateway never stopped */
    const startBot = async () => {
        await rig.seedWallet(botPlayer);
        bots = spawn(join(rig.build, "bots", "croupier-bot"), ["--gateways",
            `127.0.0.1:${gates[GAMES.length].port}`, "--bots", "1", "--game", bot!, "--seconds", "600",
            "--player-base", String(botPlayer), "--token-secret-file", rig.secretFile(),
            "--report", "/dev/null", "--progress-ms", "0"], { stdio: "ignore" });
        children.push(bots);
        await until("the bot's table", 10000, async () =>
            (await rig.redis(rig.redisPort, `EXISTS {croupier:seat}:${botPlayer}`)).startsWith(":1"));
    };
    if (bot !== null && !alone)
        await startBot();
    const reconnects = await count(".note.reconnected"), moves = await count(".note.moved");
    await page.click(`#games button[data-game="${game}"]`);
    await until("the table", 10000, () => visible("#table"));
    if (alone) {
        /* alone at the table: the page says what it waits for, and offers no move */
        await until("the waiting state", 5000, async () =>
            /Waiting for players \(1\/2 seated\)/.test(await page.$eval("#waiting", (e) => e.textContent ?? "").catch(() => "")));
        assert.equal(await count("#actions button:not([disabled])"), 0, "no move while waiting for players");
        await checkLayout(`${i + 1}-${game}-waiting`);
        await startBot();
    }
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
        assert.ok((await count("#mine svg.card")) > 0, "our cards are drawn");
        assert.match(await page.$eval("#timer", (e) => e.textContent ?? ""), /Your turn · \d+\.\d s/);
        assert.ok((game === "blackjack" || (await count("#seats .seat")) > 0) &&
                  (await count("#my-seat .seat.me.to-act")) === 1, "the seats are drawn, ours to act");
        assert.doesNotMatch(await page.$eval("#table-title", (e) => e.textContent ?? ""), /desk|\d{6,}/);
        await checkLayout(`${i + 1}-${game}-turn`);
        /* The gateway the page is on rolls; the table's server drains, a second one beside it. */
        const second = await rig.startGame(engine);
        const url = await page.$eval("#status", (e) => (e as HTMLElement).dataset.url ?? "");
        const gate = gates.find((g) => rig.url(g) === url);
        assert.ok(gate !== undefined, `the page is on ${url}, a gateway of this test`);
        assert.notEqual(gate, gates[GAMES.length], "the page is not on the bots' gateway");
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
        if (game === "zhajinhua")
            assert.equal(await count("#mine svg.card:not(.back)"), 3, "our cards, looked at, are drawn face up");
        if (game === "niuniu") {
            /* the round's banker is marked, our five cards shown, and the result lists who paid
             * whom (RoundEnd.transfers, docs/protocol.md "Transfers") */
            assert.equal(await count(".seat .badge.role-banker"), 1, "one banker is marked");
            assert.equal(await count("#mine svg.card:not(.back)"), 5, "our hand, shown, is drawn face up");
            const lines = await page.$$eval("#transfers li", (l) => l.map((x) => x.textContent ?? ""));
            assert.ok(lines.length >= 1 && lines.every((x) => /→ .*: [\d,]+ \(/.test(x)),
                      `the transfers are listed: ${lines.join("; ")}`);
        }
        await checkLayout(`${i + 1}-${game}-result`);
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
        /* after leaving nothing of the table is left to click */
        assert.equal(await visible("#table"), false, "the table is put away");
        assert.equal(await count("#actions button, #hand svg.card"), 0, "no move is offered after leaving");
        await assertNoError();
        if (bots !== null) {
            const b: ChildProcess = bots;
            b.kill("SIGTERM");
            await exited(b, 20000);
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
