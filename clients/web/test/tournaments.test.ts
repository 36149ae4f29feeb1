// The lobby's "Tournaments" tab in headless Chromium (puppeteer-core, the system's
// /usr/bin/chromium) against a real redis-server, a real croupier-director and a real
// croupier-gate with --ws-listen (the SDK's test rig, clients/ts/test/rig.ts), the tournaments
// made with croupier-ctl. The page lists them (name, format, status, buy-in + fee, entrants,
// start, prize pool), opens one, registers and unregisters by its buttons (the wallet in Redis
// moving with them), shows the refusal of a buy-in the wallet cannot cover in words, and redraws
// on the pushes: a sit & go the page is registered in filled by another player (STARTED: the
// level, blinds, time to the next level, players left, average stack, payouts, the entry
// playing), a tournament cancelled while shown (CANCELLED, its reason), and a 3-player sit & go
// the page plays at a real croupier-game --engine holdem ("Take my seat": the table view with the
// tournament's name and blinds, no Leave, check / call clicked on its turns, to its end and the
// place shown; the two others registered and away). Checked as drawn at
// 1280x800 and 390x844 (test/layout.ts); screenshots tournaments-*.png in $CROUPIER_BUILD/web-test/.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Client } from "@croupier/client";
import * as rig from "@croupier/client/dist/test/rig.js";
import puppeteer, { Browser, Page } from "puppeteer-core";

import { layoutProblems } from "./layout.js";

const SHOTS = join(rig.build, "web-test");
const CHROMIUM = process.env.CROUPIER_CHROMIUM ?? "/usr/bin/chromium";
const PLAYER = 93001;
const OTHER = 93002;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const LEVELS = [{ small_blind: 10, big_blind: 20, duration_ms: 600000 },
                { small_blind: 20, big_blind: 40, duration_ms: 600000 }];

let browser: Browser;
let page: Page;
let gate: rig.Proc;
const ids = { sng: 0, mtt: 0, rich: 0, play: 0 };
const clients: Client[] = [];
const pageErrors: string[] = [];

before(async () => {
    await rig.startRedis();
    await rig.startDirector("web-dir");
    gate = await rig.startGate("web-tour");
    await rig.redis(rig.redisPort, `SET {croupier:money}:wallet:${PLAYER} 5000`);
    await rig.redis(rig.redisPort, `SET {croupier:money}:wallet:${OTHER} 5000`);
    ids.mtt = await rig.createTournament("Sunday Million", {
        format: "mtt", seats_per_table: 9, starting_stack: 3000, buy_in: 50, fee: 5, min_entrants: 2,
        max_entrants: 100, guarantee: 1000, late_registration_levels: 1, levels: LEVELS }, 7200);
    ids.rich = await rig.createTournament("High Roller", {
        format: "sng", seats_per_table: 6, starting_stack: 5000, buy_in: 100000, fee: 5000,
        max_entrants: 6, levels: LEVELS });
    ids.sng = await rig.createTournament("Heads-up Turbo", {
        format: "sng", seats_per_table: 2, starting_stack: 1500, buy_in: 100, fee: 10,
        max_entrants: 2, levels: LEVELS });
    mkdirSync(SHOTS, { recursive: true });
    browser = await puppeteer.launch({
        executablePath: CHROMIUM, headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    page = await browser.newPage();
    await page.setViewport(DESKTOP);
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    /* the page is served from its files: it needs no server of its own for this */
    await page.goto(`file://${join(import.meta.dirname, "..", "..", "dist", "index.html")}` +
        `?token=${encodeURIComponent(rig.token(PLAYER, 3600))}&gw=${encodeURIComponent(rig.url(gate))}`);
});

after(async () => {
    for (const c of clients)
        c.close();
    await browser?.close();
    await rig.stopAll();
});

async function shot(name: string): Promise<void> {
    writeFileSync(join(SHOTS, `${name}.png`), await page.screenshot({ fullPage: true }));
}

async function checkLayout(name: string): Promise<void> {
    for (const [size, vp] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
        await page.setViewport(vp);
        const problems = await layoutProblems(page);
        await shot(`${name}-${size}`);
        assert.deepEqual(problems, [], `the page at ${vp.width}x${vp.height} (${name})`);
    }
    await page.setViewport(DESKTOP);
}

async function text(sel: string): Promise<string> {
    return page.$eval(sel, (e) => (e as HTMLElement).innerText.trim()).catch(() => "");
}

/* A fact of the detail view by its key (data-fact). */
function fact(key: string): Promise<string> {
    return text(`#tour-info [data-fact="${key}"] dd`);
}

async function waitFor(what: string, fn: () => Promise<boolean>, ms = 8000): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
        if (await fn())
            return;
        await rig.sleep(50);
    }
    throw new Error(`${what}: not within ${ms} ms`);
}

async function enabled(sel: string): Promise<boolean> {
    return page.$eval(sel, (e) => !(e as HTMLButtonElement).disabled);
}

async function openDetail(id: number): Promise<void> {
    await page.click("#tour-back").catch(() => {}); /* back to the list when a detail is shown */
    /* The list is redrawn by every push and refresh: the row is found and clicked in one step
     * in the page (a handle taken first may be detached by a redraw before the click). */
    const row = `#tour-rows tr[data-id="${id}"]`;
    await waitFor(`row of tournament ${id} clicked`, async () => page.evaluate((sel: string) => {
        const e = document.querySelector(sel) as HTMLElement | null;
        if (e === null || e.offsetParent === null)
            return false;
        e.click();
        return true;
    }, row));
    await waitFor(`tournament ${id} shown`, async () =>
        (await page.$eval("#tour-detail", (e) => !(e as HTMLElement).hidden)) && (await text("#tour-you")) !== "");
}

test("the Tournaments tab lists every tournament with its terms", async () => {
    await page.click("#login-button");
    await page.waitForSelector("#lobby:not([hidden])");
    await page.click("#tab-tournaments");
    await page.waitForSelector("#tour-rows tr", { visible: true });
    assert.equal(await page.$eval("#games-pane", (e) => (e as HTMLElement).hidden), true);
    const rows = await page.$$eval("#tour-rows tr", (l) => l.map((r) => ({
        id: Number((r as HTMLElement).dataset.id),
        cells: [...r.querySelectorAll("td")].map((td) => td.textContent ?? ""),
    })));
    assert.deepEqual(rows.map((r) => r.id), [ids.sng, ids.rich, ids.mtt], "newest first");
    assert.deepEqual(rows[0].cells, ["Heads-up Turbo", "Sit & go", "Registering", "100 + 10", "0/2", "When full", "0"]);
    assert.deepEqual(rows[1].cells.slice(0, 5), ["High Roller", "Sit & go", "Registering", "100,000 + 5,000", "0/6"]);
    const mtt = rows[2].cells;
    assert.deepEqual([mtt[0], mtt[1], mtt[3], mtt[4]], ["Sunday Million", "Multi-table", "50 + 5", "0/100"]);
    assert.match(mtt[5], /\d{4}/, "an MTT's start time");
    await checkLayout("tournaments-list");
});

test("register and unregister from the detail view, the wallet moving with them", async () => {
    await openDetail(ids.mtt);
    assert.equal(await text("#tour-title"), "Sunday Million");
    assert.equal(await fact("format"), "Multi-table");
    assert.match(await fact("status"), /^Registering · registration open$/);
    assert.equal(await fact("buy-in"), "50 + 5");
    assert.equal(await fact("stack"), "3,000");
    assert.equal(await text("#tour-you"), "You have no entry in this tournament.");
    assert.ok(await enabled("#tour-register"));
    assert.ok(!(await enabled("#tour-unregister")));
    await page.click("#tour-register");
    await waitFor("registered", async () => (await page.$eval("#tour-you", (e) => (e as HTMLElement).dataset.state)) === "registered");
    assert.match(await text("#tour-message"), /You are registered in Sunday Million: 50 \+ 5 taken/);
    assert.equal(await rig.wallet(PLAYER), 5000 - 55);
    assert.equal(await fact("pool"), "1,000", "the guarantee");
    assert.match(await text("#tour-info .tour-payouts"), /1st: /);
    assert.ok(!(await enabled("#tour-register")));
    assert.ok(await enabled("#tour-unregister"));
    await checkLayout("tournaments-registered");
    await page.click("#tour-unregister");
    await waitFor("unregistered", async () => (await page.$eval("#tour-you", (e) => (e as HTMLElement).dataset.state)) === "none");
    assert.match(await text("#tour-message"), /no longer registered/);
    assert.equal(await rig.wallet(PLAYER), 5000);
});

test("a buy-in the wallet cannot cover: the refusal in words, nothing taken", async () => {
    await openDetail(ids.rich);
    await page.click("#tour-register");
    await waitFor("refused", async () => (await text("#tour-message")) !== "");
    assert.equal(await page.$eval("#tour-message", (e) => (e as HTMLElement).dataset.code), "INSUFFICIENT_FUNDS");
    assert.equal(await page.$eval("#tour-message", (e) => e.className), "error");
    assert.equal(await text("#tour-message"),
                 "Your wallet does not cover the buy-in and fee (100,000 + 5,000). Nothing was taken.");
    assert.equal(await rig.wallet(PLAYER), 5000);
    assert.equal(await text("#tour-you"), "You have no entry in this tournament.");
    await checkLayout("tournaments-refused");
});

test("a sit & go filled by another player: the STARTED push redraws the detail", async () => {
    await openDetail(ids.sng);
    await page.click("#tour-register");
    await waitFor("registered", async () => (await page.$eval("#tour-you", (e) => (e as HTMLElement).dataset.state)) === "registered");
    const other = new Client({ urls: [rig.url(gate)], token: rig.token(OTHER) });
    clients.push(other);
    await other.connect();
    await other.registerTournament(ids.sng);
    /* no click: the page redraws on the push */
    await waitFor("running", async () => (await fact("status")).startsWith("Running"));
    await waitFor("the entry playing", async () => (await text("#tour-you")).startsWith("Your entry: Playing"));
    assert.equal(await fact("level"), "Level 1 · blinds 10/20");
    assert.match(await fact("next-level"), /^(9|10):\d\d$/);
    assert.equal(await fact("players-left"), "2");
    assert.equal(await fact("average"), "1,500");
    assert.equal(await fact("entrants"), "2/2 (at least 2)");
    assert.equal(await fact("pool"), "200");
    assert.match(await text("#tour-you"), /stack 1,500/);
    assert.equal(await text("#tour-info .tour-payouts"), "1st: 200");
    assert.ok(!(await enabled("#tour-register")) && !(await enabled("#tour-unregister")));
    const noted = await page.$$eval(".note.tournament", (l) => l.map((e) => e.textContent ?? ""));
    assert.ok(noted.some((n) => /Heads-up Turbo started with 2 players/.test(n)), noted.join("\n"));
    await checkLayout("tournaments-running");
    /* and the list says so */
    await page.click("#tour-back");
    await waitFor("the list redrawn", async () =>
        (await text(`#tour-rows tr[data-id="${ids.sng}"] .tour-status`)) === "Running");
});

test("a tournament cancelled while shown: the CANCELLED push, its reason", async () => {
    await openDetail(ids.mtt);
    rig.ctl("tour", "cancel", String(ids.mtt), "--reason", "storm warning");
    await waitFor("cancelled", async () => (await fact("status")) === "Cancelled");
    assert.equal(await fact("detail"), "storm warning");
    assert.ok(!(await enabled("#tour-register")));
    const noted = await page.$$eval(".note.tournament", (l) => l.map((e) => e.textContent ?? ""));
    assert.ok(noted.some((n) => /Sunday Million was cancelled \(storm warning\)/.test(n)), noted.join("\n"));
    assert.equal(await page.$eval("#error", (e) => (e as HTMLElement).hidden), true, "no error banner");
    assert.deepEqual(pageErrors, []);
});

test("Take my seat: the page plays a small sit & go at its table to the end and shows the place", async () => {
    /* the running heads-up SNG of the test above would be played by the server too: cancelled */
    rig.ctl("tour", "cancel", String(ids.sng), "--reason", "done with it");
    await rig.startGame("holdem", ["--holdem-trustee-ms", "2", "--holdem-gap-ms", "0",
                                   "--holdem-action-ms", "2000", "--holdem-tour-host-ttl-ms", "1200"]);
    ids.play = await rig.createTournament("Page SNG", {
        format: "sng", seats_per_table: 3, starting_stack: 1500, buy_in: 100, fee: 10, min_entrants: 3,
        max_entrants: 3, levels: [
            { small_blind: 10, big_blind: 20, duration_ms: 1500 },
            { small_blind: 50, big_blind: 100, duration_ms: 1000 },
            { small_blind: 200, big_blind: 400, ante: 50, duration_ms: 1000 },
            { small_blind: 1000, big_blind: 2000, ante: 200, duration_ms: 1000 },
            { small_blind: 10000, big_blind: 20000, ante: 2000, duration_ms: 1000 },
            { small_blind: 100000, big_blind: 200000, ante: 20000, duration_ms: 1000 }] });
    await page.click("#tour-back").catch(() => {});
    await page.click("#tour-refresh");
    await openDetail(ids.play);
    await page.click("#tour-register");
    await waitFor("registered", async () => (await page.$eval("#tour-you", (e) => (e as HTMLElement).dataset.state)) === "registered");
    assert.ok(!(await enabled("#tour-seat")), "no seat to take before the start");
    for (const id of [93011, 93012]) {
        await rig.redis(rig.redisPort, `SET {croupier:money}:wallet:${id} 5000`);
        const o = new Client({ urls: [rig.url(gate)], token: rig.token(id) });
        clients.push(o);
        await o.connect();
        await o.registerTournament(ids.play);
        o.close(); /* away: the automatic move plays their seats */
    }
    await waitFor("the entry playing", async () => (await text("#tour-you")).startsWith("Your entry: Playing"));
    await waitFor("Take my seat enabled", () => enabled("#tour-seat"));
    await page.click("#tour-seat");
    await page.waitForSelector("#table:not([hidden])", { timeout: 10000 });
    await waitFor("the title with the table and blinds", async () =>
        /^Page SNG · Texas Hold'em · table 1 · Level \d+ · blinds [\d,]+\/[\d,]+/.test(await text("#table-title")));
    assert.equal(await page.$eval("#table", (e) => (e as HTMLElement).dataset.engine), "ENGINE_HOLDEM");
    assert.ok(!(await enabled("#leave")), "no Leave at a tournament table");
    assert.match(await text("#leave"), /kept until you are out/);
    const seatedNote = await page.$$eval(".note.tournament", (l) => l.map((e) => e.textContent ?? ""));
    assert.ok(seatedNote.some((n) => /Page SNG: seated at table 1, seat \d/.test(n)), seatedNote.join("\n"));
    await checkLayout("tournaments-table");
    /* play: check, else call, whenever it is the page's turn, until the tournament ends for it */
    let clicks = 0;
    const end = Date.now() + 90000;
    while (Date.now() < end) {
        if (await page.$eval("#table", (e) => (e as HTMLElement).hidden))
            break; /* the tournament is over for the page: back to the lobby */
        const ready = await page.$eval("#actions", (e) => (e as HTMLElement).dataset.ready).catch(() => "false");
        if (ready === "true") {
            for (const move of ["check", "call"]) {
                const b = await page.$(`#actions button[data-move="${move}"]:not([disabled])`);
                if (b !== null) {
                    await b.click().catch(() => {});
                    clicks++;
                    break;
                }
            }
        }
        await rig.sleep(30);
    }
    assert.ok(await page.$eval("#table", (e) => (e as HTMLElement).hidden), "the page left the table at the end");
    assert.ok(clicks > 0, "the page played its turns");
    await waitFor("the result shown", async () => /You (won|finished)/.test(await text("#tour-message")), 10000);
    /* the place the page says is its entry's, read again from the director */
    await waitFor("the entry placed", async () => / · (1st|2nd|3rd) place/.test(await text("#tour-you")));
    const ord = / · (1st|2nd|3rd) place/.exec(await text("#tour-you"))![1];
    assert.match(await text("#tour-you"), ord === "1st" ? /^Your entry: Won/ : /^Your entry: Out/);
    const msg = await text("#tour-message");
    assert.ok(ord === "1st" ? msg.startsWith("You won Page SNG") : msg.startsWith(`You finished ${ord} in Page SNG`), msg);
    const noted = await page.$$eval(".note.tournament", (l) => l.map((e) => e.textContent ?? ""));
    assert.ok(noted.some((n) => /You (won|finished)/.test(n)), noted.join("\n"));
    await checkLayout("tournaments-finished");
    assert.equal(await page.$eval("#error", (e) => (e as HTMLElement).hidden), true, "no error banner");
    assert.deepEqual(pageErrors, []);
});
