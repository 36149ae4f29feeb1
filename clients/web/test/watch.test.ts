// Watch and replay in headless Chromium (docs/spectators.md, docs/replays.md) against a real
// redis-server, croupier-game servers and three croupier-gate with --ws-listen (the SDK's test
// rig, clients/ts/test/rig.ts). Two SDK clients play hold'em (check or call) at a 3-seat table; a
// spectator page watches it from the lobby's list, then follows one of the players through its
// gateway's SIGTERM (the SDK reconnects to the second gateway and watches again: the page keeps
// the table) and through the drain of the table's server (the table moves whole to a second
// server: the page is told of the new table and draws it); watched by its id, the table moves away
// at the next drain: WatchEnded, its reason in words. Every card the spectator page ever
// draws is recorded as it is drawn: none may be a hole card of its round, and the result may show
// only the hands the round showed. Then a player page plays a blackjack round, replays it and
// shares it; the spectator page opens the code in the replay viewer, steps back and forth,
// auto-plays and reaches the results; a malformed and an unknown code are refused in words; a
// hold'em hand shared by a player replays to the stranger with the hole cards as backs until
// the showdown. Layout checked and screenshots (watch-*, replay-*) in $CROUPIER_BUILD/web-test/.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Client, croupier } from "@croupier/client";
import * as rig from "@croupier/client/dist/test/rig.js";
import type { Browser, Page } from "puppeteer-core";

import { layoutProblems } from "./layout.js";
import { DESKTOP, PHONE, SHOTS, WEB, launchBrowser, terminateGame } from "./procs.js";

const SPECTATOR = 93001, PLAYERS = [93101, 93102], BJ_PLAYER = 93201;
Object.assign(process.env, {
    CROUPIER_BUDGET_ACTION_MS: "1500", CROUPIER_BUDGET_JOIN_MS: "2500", CROUPIER_BUDGET_LEAVE_MS: "1500",
    CROUPIER_BUDGET_RESUME_MS: "2500",
});
/* a 3-seat table (two players: listed, one seat free), quick hands */
const HOLDEM = ["--holdem-seats", "3", "--holdem-gap-ms", "1200", "--holdem-action-ms", "20000"];

let browser: Browser;
let spect: Page;   /* the spectator, later the replay viewer */
let gA: rig.Proc, gB: rig.Proc, gP: rig.Proc; /* the spectator's two gateways; the players' */
const players: Client[] = [];
const holes = new Map<string, number[]>();   /* round id -> every player's hole cards */
const shown = new Map<string, number[]>();   /* round id -> the cards RoundEnd showed */
const ends: string[] = [];                   /* the rounds ended, in order */
const pageErrors: string[] = [];

before(async () => {
    await rig.startRedis();
    for (const p of [SPECTATOR, ...PLAYERS, BJ_PLAYER])
        await rig.seedWallet(p);
    gA = await rig.startGate("watch-a");
    gB = await rig.startGate("watch-b");
    gP = await rig.startGate("watch-p");
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchBrowser();
    spect = await openPage(SPECTATOR, [gA, gB]);
});

after(async () => {
    for (const c of players)
        c.close();
    await browser?.close();
    await rig.stopAll();
});

async function openPage(player: number, gates: rig.Proc[]): Promise<Page> {
    const p = await browser.newPage();
    await p.setViewport(DESKTOP);
    p.on("pageerror", (e) => pageErrors.push(String(e)));
    const gw = gates.map(rig.url).join(",");
    await p.goto(`file://${join(WEB, "dist", "index.html")}?token=${encodeURIComponent(rig.token(player, 3600))}` +
                 `&gw=${encodeURIComponent(gw)}`);
    await p.click("#login-button");
    await until(p, "the lobby", 10000, () => visible(p, "#lobby"));
    return p;
}

async function shot(p: Page, name: string): Promise<void> {
    writeFileSync(join(SHOTS, `${name}.png`), await p.screenshot({ fullPage: true }));
}

async function until(p: Page, what: string, ms: number, cond: () => Promise<boolean>): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
        if (await cond())
            return;
        await rig.sleep(100);
    }
    await shot(p, `timeout-${what.replace(/\W+/g, "-")}`).catch(() => {});
    const notes = await p.$$eval("#notes li", (l) => l.map((x) => x.textContent)).catch(() => []);
    throw new Error(`${what}: not within ${ms} ms; the page's notes, newest first:\n  ${notes.join("\n  ")}`);
}

const visible = (p: Page, sel: string) => p.$eval(sel, (e) => !(e as HTMLElement).hidden).catch(() => false);
const count = (p: Page, sel: string) => p.$$eval(sel, (l) => l.length);
const text = (p: Page, sel: string) => p.$eval(sel, (e) => e.textContent ?? "").catch(() => "");
const errorText = (p: Page) => p.$eval("#error", (e) => ((e as HTMLElement).hidden ? "" : e.textContent ?? ""));

async function typeInto(p: Page, sel: string, value: string): Promise<void> {
    await p.$eval(sel, (e) => { (e as HTMLInputElement).value = ""; });
    await p.type(sel, value);
}

async function checkLayout(p: Page, name: string): Promise<void> {
    for (const [size, vp] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
        await p.setViewport(vp);
        const problems = await layoutProblems(p);
        await shot(p, `${name}-${size}`);
        assert.deepEqual(problems, [], `the page at ${vp.width}x${vp.height} (${name})`);
    }
    await p.setViewport(DESKTOP);
}

/* A hold'em player through the SDK: checks or calls on its turns, keeps its hole cards and the
 * cards each RoundEnd showed, by round. */
async function holdemPlayer(id: number): Promise<Client> {
    const c = new Client({ urls: [rig.url(gP)], token: () => rig.token(id) });
    players.push(c);
    let seat = -1;
    c.on("deal", (d) => {
        /* a board's Deal has no seat (absent reads as 0): only one's own */
        if (Object.hasOwn(d, "seat") && d.seat === seat && d.cards && d.cards.length > 0 && d.roundId)
            holes.set(d.roundId, [...(holes.get(d.roundId) ?? []), ...d.cards]);
    });
    c.on("turn", (t) => {
        if (t.seat !== seat)
            return;
        const move = Number(t.toCall ?? 0) > 0 ? croupier.HoldemMove.HOLDEM_CALL : croupier.HoldemMove.HOLDEM_CHECK;
        c.act({ holdem: { move } }).catch(() => undefined);
    });
    c.on("moved", (m) => { seat = m.to?.seat ?? seat; });
    c.on("roundEnd", (e) => {
        const rid = e.roundId ?? "";
        if (!shown.has(rid)) {
            shown.set(rid, (e.deltas ?? []).flatMap((d) => [...(d.shownCards ?? [])]));
            ends.push(rid);
        }
    });
    await c.connect();
    seat = (await c.join(croupier.Engine.ENGINE_HOLDEM, "holdem", 10)).joined?.seat ?? -1;
    assert.ok(seat >= 0, `player ${id} seated`);
    return c;
}

/* Every card the page draws on its table, recorded as it is drawn (a MutationObserver): its
 * code, the round it was drawn for, and whether it is in the round's result. */
async function recordCards(p: Page): Promise<void> {
    await p.evaluate(() => {
        const w = window as unknown as { drawn: { code: number; round: string; result: boolean }[] };
        w.drawn = [];
        const look = (n: Node) => {
            if (!(n instanceof Element))
                return;
            const cards = n.matches("svg.card") ? [n] : [...n.querySelectorAll("svg.card")];
            for (const c of cards) {
                const code = (c as SVGElement).dataset.code;
                if (code === undefined)
                    continue; /* a back */
                const at = c.closest("#result") ?? document.getElementById("table")!;
                w.drawn.push({ code: Number(code), round: (at as HTMLElement).dataset.round ?? "", result: at.id === "result" });
            }
        };
        new MutationObserver((ms) => ms.forEach((m) => m.addedNodes.forEach(look)))
            .observe(document.getElementById("table")!, { childList: true, subtree: true });
    });
}

test("a spectator page: a listed table, then a player followed through a gateway SIGTERM and a drain", async () => {
    const first = await rig.startGame("holdem", HOLDEM);
    for (const id of PLAYERS)
        await holdemPlayer(id);
    await until(spect, "a first hand", 15000, async () => ends.length > 0);
    await recordCards(spect);

    /* the lobby's list: the table with a free seat; watched, then left */
    await spect.click("#tab-watch");
    await until(spect, "the table in the list", 10000, async () => (await count(spect, "#watch-tables li[data-game=holdem]")) === 1);
    assert.match(await text(spect, "#watch-tables li"), /Texas Hold'em · stake 10 · 2 of 3 seats taken/);
    await checkLayout(spect, "watch-lobby");
    await spect.click("#watch-tables li[data-game=holdem] button");
    await until(spect, "the watched table", 10000, () => visible(spect, "#table"));
    assert.match(await text(spect, "#table-title"), /^Watching · Texas Hold'em · stake 10/);
    assert.match(await text(spect, "#watch-text"), /Watching a Texas Hold'em table/);
    assert.equal(await spect.$eval("#table", (e) => (e as HTMLElement).dataset.spectator), "true");
    const rounds0 = await count(spect, ".note.round");
    await until(spect, "a hand seen by the spectator", 15000, async () => (await count(spect, ".note.round")) > rounds0);
    assert.equal(await count(spect, "#seats .seat:not(.empty)"), 2, "the two players' seats");
    assert.equal(await count(spect, "#my-seat .seat, .seat.me"), 0, "no seat of the spectator's");
    assert.equal(await count(spect, "#actions button, #actions input"), 0, "no move offered");
    assert.equal(await visible(spect, "#leave"), false);
    await checkLayout(spect, "watch-table");
    await spect.click("#unwatch");
    await until(spect, "the lobby after Unwatch", 5000, () => visible(spect, "#lobby"));

    /* following a player: bad input refused in words, nothing sent */
    await spect.click("#tab-watch");
    for (const [input, re] of [["abc", /A player id is a whole number above 0 \(not "abc"\)/],
                               [String(SPECTATOR), /You cannot watch yourself/],
                               ["424242", /Cannot watch player 424242: he sits at no table now/]] as const) {
        await typeInto(spect, "#watch-player", input);
        await spect.click("#watch-follow");
        await until(spect, `the refusal of ${input}`, 5000, async () => re.test(await errorText(spect)));
        assert.equal(await visible(spect, "#lobby"), true);
    }
    await typeInto(spect, "#watch-player", String(PLAYERS[0]));
    await spect.click("#watch-follow");
    await until(spect, "the followed player's table", 10000, () => visible(spect, "#table"));
    assert.equal(await errorText(spect), "", "the refusals' banner is put away");
    assert.match(await text(spect, "#watch-text"), new RegExp(`Watching player ${PLAYERS[0]}`));

    /* the spectator's gateway rolls: the SDK reconnects to the other one and watches again */
    assert.equal(await spect.$eval("#status", (e) => (e as HTMLElement).dataset.url), rig.url(gA));
    gA.child.kill("SIGTERM");
    await until(spect, "the reconnect", 15000, async () => (await count(spect, ".note.reconnected")) > 0);
    assert.match(await text(spect, ".note.reconnected"), /watching again/);
    let rounds = await count(spect, ".note.round");
    await until(spect, "a hand after the reconnect", 15000, async () => (await count(spect, ".note.round")) > rounds);
    assert.equal(await visible(spect, "#table"), true, "the table is still shown");
    assert.equal(await spect.$eval("#watch-banner", (e) => (e as HTMLElement).dataset.state), "watching");
    assert.equal(await rig.exited(gA, 10000), 0, "the gateway exited 0");

    /* the table's server drains: the table moves whole to a second server, the page follows */
    const second = await rig.startGame("holdem", HOLDEM);
    const drained = terminateGame(first);
    await until(spect, "the new table", 30000, async () => (await count(spect, ".note.watch[data-kind=new-table]")) > 0);
    rounds = await count(spect, ".note.round");
    await until(spect, "a hand at the new table", 20000, async () => (await count(spect, ".note.round")) > rounds);
    assert.equal(await drained, 0, "the drained server exited 0");
    assert.equal(await spect.$eval("#watch-banner", (e) => (e as HTMLElement).dataset.state), "watching");
    assert.equal(await count(spect, "#seats .seat:not(.empty)"), 2);
    await checkLayout(spect, "watch-moved");

    /* never a hole card drawn for its round; in a result only the cards the round showed */
    const drawn = await spect.evaluate(() => (window as unknown as { drawn: { code: number; round: string; result: boolean }[] }).drawn);
    assert.ok(drawn.length > 0, "cards were drawn (the boards)");
    const bad = drawn.filter((d) => d.result ? !(shown.get(d.round) ?? []).includes(d.code)
                                             : (holes.get(d.round) ?? []).includes(d.code));
    assert.deepEqual(bad, [], "the spectator page drew a card it may not see");
    assert.ok(drawn.some((d) => holes.has(d.round)), "the rounds drawn were the players' rounds");
    assert.equal(await errorText(spect), "");
    assert.deepEqual(pageErrors, []);
    await spect.click("#unwatch");
    await until(spect, "the lobby", 5000, () => visible(spect, "#lobby"));

    /* a table watched by its id moves away at a drain: WatchEnded, its reason in words */
    await spect.click("#tab-watch");
    await until(spect, "the moved table in the list", 10000, async () => (await count(spect, "#watch-tables li[data-game=holdem]")) === 1);
    await spect.click("#watch-tables li[data-game=holdem] button");
    await until(spect, "the table watched by id", 10000, () => visible(spect, "#table"));
    await rig.startGame("holdem", HOLDEM);
    const drained2 = terminateGame(second);
    await until(spect, "the watch's end", 30000, async () => (await count(spect, ".note[data-kind=watch-ended]")) > 0);
    assert.equal(await spect.$eval("#watch-banner", (e) => (e as HTMLElement).dataset.state), "ended");
    assert.match(await text(spect, "#watch-text"),
        /^The watch ended: the table is gone: it closed, or moved to another server \(follow a player to follow his table\)/);
    assert.equal(await text(spect, "#unwatch"), "Back to the lobby");
    assert.equal(await visible(spect, "#table"), true, "the last table stays drawn");
    await checkLayout(spect, "watch-ended");
    await spect.click("#unwatch");
    await until(spect, "the lobby after the end", 5000, () => visible(spect, "#lobby"));
    assert.equal(await drained2, 0, "the second server drained and exited 0");
    assert.equal(await errorText(spect), "");
});

test("replays: a blackjack round shared by its player and opened by code; bad codes refused; a stranger's hold'em hand", async () => {
    if (await visible(spect, "#table") && await visible(spect, "#watch-banner"))
        await spect.click("#unwatch"); /* the test above stopped half-way */
    await rig.startGame("persistent", ["--bj-bet-ms", "8000", "--bj-action-ms", "20000", "--bj-gap-ms", "2000"]);
    const player = await openPage(BJ_PLAYER, [gP]);
    await player.click('#games button[data-game="blackjack"]');
    await until(player, "a blackjack round", 30000, async () => {
        for (const m of ["bet", "no-insurance", "stand"]) {
            const b = await player.$(`#actions button[data-move="${m}"]:not([disabled])`);
            if (b !== null) {
                await b.click().catch(() => {});
                break;
            }
        }
        return (await count(player, ".note.round")) > 0;
    });
    /* his own round: replayed at once, then shared, from its note (it stays when the next
     * round clears the table) */
    const rid = await player.$eval(".note.round", (e) => (e as HTMLElement).dataset.round ?? "");
    const note = `.note.round[data-round="${rid}"]`;
    assert.equal(await count(spect, ".note.round button"), 0, "a spectator's rounds have no Replay or Share");
    await player.click(`${note} button[data-do=replay]`);
    await until(player, "his replay", 10000, () => visible(player, "#replay"));
    assert.equal(await count(player, "#replay .seat.me"), 1, "his seat is his");
    await player.click("#replay-end");
    assert.match(await text(player, "#replay-result"), /Round over.*You: [+-]?\d/s);
    await player.click("#replay-close");
    await until(player, "the table again", 5000, () => visible(player, "#table"));
    await player.click(`${note} button[data-do=share]`);
    await until(player, "the share code", 10000, async () => (await count(player, `${note} .share-code`)) === 1);
    const code = await player.$eval(`${note} .share-code`, (e) => (e as HTMLElement).dataset.code ?? "");
    assert.match(code, /^\d{8}$/);
    assert.match(await text(player, `${note} .share-code`), new RegExp(`Share code: ${code}`));
    assert.equal(await player.$eval(`${note} button[data-do=share]`, (e) => (e as HTMLButtonElement).disabled), true);
    assert.match(await text(player, `.note[data-code="${code}"]`), /valid until/);
    await checkLayout(player, "replay-shared");

    /* the other page (brought to the front: a background tab draws no frame): bad codes
     * refused in words */
    await spect.bringToFront();
    await spect.click("#tab-watch");
    await typeInto(spect, "#replay-code", "123");
    await spect.click("#replay-open");
    assert.equal(await errorText(spect), 'A share code is 8 digits (not "123")');
    const unknown = code === "00000000" ? "00000001" : "00000000";
    await typeInto(spect, "#replay-code", unknown);
    await spect.click("#replay-open");
    await until(spect, "the unknown code's refusal", 5000, async () =>
        (await errorText(spect)) === `No replay has the code ${unknown}: it was never made, or it expired`);
    assert.equal(await visible(spect, "#replay"), false);

    /* the code: stepped forward, back, auto-played, to its end */
    await typeInto(spect, "#replay-code", code);
    await spect.click("#replay-open");
    await until(spect, "the replay viewer", 10000, () => visible(spect, "#replay"));
    assert.equal(await errorText(spect), "");
    const at = () => spect.$eval("#replay", (e) => Number((e as HTMLElement).dataset.step));
    const total = await spect.$eval("#replay", (e) => Number((e as HTMLElement).dataset.total));
    assert.ok(total >= 4, `a blackjack round has its deals and actions (${total} events)`);
    assert.equal(await at(), 0);
    assert.match(await text(spect, "#replay-title"), /^Replay · Blackjack · stake 10/);
    assert.equal(await spect.$eval("#replay-back", (e) => (e as HTMLButtonElement).disabled), true);
    await spect.click("#replay-forward");
    await spect.click("#replay-forward");
    assert.equal(await at(), 2);
    assert.ok((await text(spect, "#replay-step")) !== "");
    await spect.click("#replay-back");
    assert.equal(await at(), 1);
    const playing = () => spect.$eval("#replay", (e) => (e as HTMLElement).dataset.playing === "true");
    await spect.click("#replay-play");
    assert.equal(await playing(), true);
    assert.equal(await text(spect, "#replay-play"), "Pause");
    await until(spect, "the auto-play", 5000, async () => (await at()) >= 3);
    if (await playing())
        await spect.click("#replay-play"); /* pause (at its end it stopped by itself) */
    assert.equal(await playing(), false);
    const paused = await at();
    await rig.sleep(1200);
    assert.equal(await at(), paused, "paused");
    while ((await at()) < total)
        await spect.click("#replay-forward");
    assert.equal(await spect.$eval("#replay", (e) => (e as HTMLElement).dataset.ended), "true");
    assert.match(await text(spect, "#replay-result"), new RegExp(`Round over.*Player ${BJ_PLAYER}: [+-]?\\d`, "s"));
    assert.ok((await count(spect, "#replay-table svg.card[data-code]")) >= 2, "the dealer's cards, face up");
    assert.ok((await count(spect, "#replay-seats svg.card[data-code]")) >= 2, "the player's cards, face up");
    assert.equal(await count(spect, "#replay svg.card.back"), 0, "blackjack shows every card (policy all)");
    assert.equal(await count(spect, "#replay-log li"), total);
    await checkLayout(spect, "replay-end");
    await spect.click("#replay-start");
    assert.equal(await at(), 0);
    assert.equal(await count(spect, "#replay-seats svg.card"), 0, "nothing dealt at the start");
    await spect.click("#replay-close");
    await until(spect, "the lobby", 5000, () => visible(spect, "#lobby"));

    /* a hold'em hand of the first test, shared by a player: the stranger sees the hole cards as
     * backs until the showdown shows those the table showed */
    const hid = ends[0];
    const hand = await players[0].shareReplay(hid, "holdem");
    await typeInto(spect, "#replay-code", hand.code);
    await spect.click("#replay-open");
    await until(spect, "the hold'em replay", 10000, () => visible(spect, "#replay"));
    for (let n = 0; n < 12; n++) { /* to the first step that is no deal, then one back: the hands dealt */
        await spect.click("#replay-forward");
        if (!/dealt/.test(await text(spect, "#replay-step")))
            break;
    }
    await spect.click("#replay-back");
    assert.match(await text(spect, "#replay-step"), /dealt \d cards? face down/);
    assert.equal(await count(spect, "#replay-seats svg.card.back"), 4, "two hands dealt face down");
    assert.equal(await count(spect, "#replay-seats svg.card[data-code]"), 0);
    await spect.click("#replay-end");
    const faceUp = await spect.$$eval("#replay-seats svg.card[data-code]", (l) => l.map((c) => Number((c as SVGElement).dataset.code)));
    assert.ok(faceUp.every((c) => (shown.get(hid) ?? []).includes(c)), "only the hands the table showed");
    assert.equal(faceUp.length, (shown.get(hid) ?? []).length);
    assert.ok((await count(spect, "#replay-table svg.card[data-code]")) >= 3, "the board");
    assert.equal(await errorText(spect), "");
    assert.deepEqual(pageErrors, []);
    await player.close();
});
