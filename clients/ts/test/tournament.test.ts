// Tournaments through the SDK (docs/protocol.md "Tournaments") against a real redis-server, a
// real croupier-director and two real croupier-gate (test/rig.ts), the tournaments created with
// croupier-ctl: the list and its filters, a tournament's state with your entry, registration and
// unregistration with the money they move, every refusal typed (and those the SDK makes at once,
// the connection kept), TakeTournamentSeat answered NOT_SEATED (retriable) before the start, a sit & go filled by three
// clients each getting the STARTED push, a cancellation pushed as CANCELLED, and a client that
// follows a tournament through a gateway SIGTERM: it asks again on the other gateway
// ("tournamentInfo") and gets the pushes there. The README's "Tournaments" example is
// examples/tournaments.mjs and runs as written, outside the repository.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Client, CroupierError, croupier } from "../src/index.js";
import * as rig from "./rig.js";

const S = croupier.TournamentStatus;
const K = croupier.TournamentEventKind;

const LEVELS = [{ small_blind: 10, big_blind: 20, duration_ms: 600000 },
                { small_blind: 20, big_blind: 40, duration_ms: 600000 }];
const sng = (max: number) => ({ format: "sng", seats_per_table: max, starting_stack: 1500,
                                buy_in: 100, fee: 10, min_entrants: max, max_entrants: max,
                                levels: LEVELS });
const MTT = { format: "mtt", seats_per_table: 9, starting_stack: 3000, buy_in: 50, fee: 5,
              min_entrants: 2, max_entrants: 100, guarantee: 1000, late_registration_levels: 1,
              levels: LEVELS };

let gates: rig.Proc[] = [];
const clients: Client[] = [];

before(async () => {
    await rig.startRedis();
    await rig.startDirector("sdk-dir");
    gates = [await rig.startGate("sdk-tour-1"), await rig.startGate("sdk-tour-2")];
});
after(async () => {
    for (const c of clients)
        c.close(); /* those a failed test left open */
    await rig.stopAll();
});

async function player(id: number, chips: number | null = 10000, urls = [rig.url(gates[0])]):
    Promise<Client> {
    if (chips !== null)
        await rig.redis(rig.redisPort, `SET {croupier:money}:wallet:${id} ${chips}`);
    const c = new Client({ urls, token: () => rig.token(id) });
    clients.push(c);
    await c.connect();
    return c;
}

function refusedWith(code: croupier.ErrorCode) {
    return (e: unknown) => {
        assert.ok(e instanceof CroupierError, String(e));
        assert.equal(e.codeName, croupier.ErrorCode[code], e.message);
        assert.equal(e.code, code);
        return true;
    };
}

/* The next tournamentEvent of a kind for a tournament. */
function nextTourEvent(c: Client, tour: number, kind: croupier.TournamentEventKind, ms = 8000):
    Promise<croupier.ITournamentEvent> {
    return new Promise((res, rej) => {
        const t = setTimeout(() => rej(new Error(`no ${K[kind]} for ${tour} within ${ms} ms`)), ms);
        const fn = (ev: croupier.ITournamentEvent) => {
            if (Number(ev.tournament) !== tour || ev.kind !== kind)
                return;
            clearTimeout(t);
            c.off("tournamentEvent", fn);
            res(ev);
        };
        c.on("tournamentEvent", fn);
    });
}

test("list, state, register and unregister with their money, every refusal typed", async () => {
    const s = await rig.createTournament("Daily SNG", sng(3));
    const m = await rig.createTournament("Sunday MTT", MTT, 3600);
    const a = await player(701, 10000);

    const all = await a.listTournaments();
    assert.ok(all.total >= 2);
    const ids = all.tournaments.map((t) => Number(t.id));
    assert.ok(ids.indexOf(m) >= 0 && ids.indexOf(m) < ids.indexOf(s), "newest first");
    const sum = all.tournaments.find((t) => Number(t.id) === s)!;
    assert.equal(sum.name, "Daily SNG");
    assert.equal(sum.format, croupier.TournamentFormat.TOUR_SNG);
    assert.equal(sum.status, S.TOUR_REGISTERING);
    assert.equal(sum.buyIn, 100);
    assert.equal(sum.fee, 10);
    assert.equal(sum.maxEntrants, 3);
    assert.equal(sum.entrants, 0);
    const mtt = all.tournaments.find((t) => Number(t.id) === m)!;
    assert.equal(mtt.format, croupier.TournamentFormat.TOUR_MTT);
    assert.ok(Math.abs(Number(mtt.startAtUnixMs) - (Date.now() + 3600 * 1000)) < 60000,
              "an MTT's start time");
    assert.equal((await a.listTournaments({ limit: 1 })).tournaments.length, 1);
    assert.ok((await a.listTournaments({ status: S.TOUR_FINISHED })).tournaments
        .every((t) => t.status === S.TOUR_FINISHED));

    /* Refused at once by the SDK, nothing sent: the gateway's codec would close the connection
     * for a limit out of 1..200; a tournament id 0 is BAD_REQUEST there too. */
    for (const limit of [0, 201, 1.5])
        await assert.rejects(a.listTournaments({ limit }), refusedWith(croupier.ErrorCode.BAD_REQUEST));
    await assert.rejects(a.getTournament(0), refusedWith(croupier.ErrorCode.BAD_REQUEST));
    await assert.rejects(a.registerTournament(-3), refusedWith(croupier.ErrorCode.BAD_REQUEST));
    await assert.rejects(a.getTournament(987654), refusedWith(croupier.ErrorCode.NO_SUCH_TOURNAMENT));
    await assert.rejects(a.registerTournament(987654), refusedWith(croupier.ErrorCode.NO_SUCH_TOURNAMENT));

    const before = await a.getTournament(s);
    assert.equal(before.name, "Daily SNG");
    assert.equal(before.startingStack, 1500);
    assert.equal(before.registrationOpen, true);
    assert.ok(!Object.hasOwn(before, "level") && !Object.hasOwn(before, "smallBlind"),
              "no level in force before the start");
    assert.ok(!Object.hasOwn(before, "you"), "no entry yet");

    await a.registerTournament(s);
    assert.equal(await rig.wallet(701), 10000 - 110, "buy-in + fee taken");
    const mine = await a.getTournament(s);
    assert.equal(mine.you?.state, croupier.TournamentEntryState.TOUR_ENTRY_REGISTERED);
    assert.equal(mine.entries, 1);
    assert.equal(mine.prizePool, 100);
    assert.equal((await a.listTournaments()).tournaments.find((t) => Number(t.id) === s)?.entrants, 1);
    await assert.rejects(a.registerTournament(s), refusedWith(croupier.ErrorCode.ALREADY_REGISTERED));

    /* Registered before the start: waiting for a seat, typed, retriable (playTournament asks
     * again; test/tournament_play.test.ts plays one). */
    await assert.rejects(a.takeTournamentSeat(s), (e: unknown) =>
        refusedWith(croupier.ErrorCode.NOT_SEATED)(e) && (e as CroupierError).retriable);

    await a.unregisterTournament(s);
    assert.equal(await rig.wallet(701), 10000, "buy-in and fee back");
    assert.ok(!Object.hasOwn(await a.getTournament(s), "you"), "no entry after unregistering");
    await assert.rejects(a.unregisterTournament(s), refusedWith(croupier.ErrorCode.NOT_REGISTERED));

    const poor = await player(702, 50);
    await assert.rejects(poor.registerTournament(s), refusedWith(croupier.ErrorCode.INSUFFICIENT_FUNDS));
    assert.equal(await rig.wallet(702), 50, "nothing taken");
    /* the connection is the same one all along: nothing refused closed it */
    assert.ok((await a.ping()) > 0);
    a.close();
    poor.close();
});

test("a sit & go filled by three clients: each gets STARTED; then refusals; a cancel is pushed", async () => {
    const s = await rig.createTournament("Turbo SNG", sng(3));
    const cs = [await player(711), await player(712), await player(713)];
    const started = cs.map((c) => nextTourEvent(c, s, K.TOUR_EVENT_STARTED));
    for (const c of cs)
        await c.registerTournament(s);
    for (const ev of await Promise.all(started))
        assert.equal(ev.playersLeft, 3);
    const info = await cs[0].getTournament(s);
    assert.equal(info.status, S.TOUR_RUNNING);
    assert.equal(info.you?.state, croupier.TournamentEntryState.TOUR_ENTRY_PLAYING);
    assert.equal(info.you?.stack, 1500);
    assert.equal(info.averageStack, 1500);
    assert.equal(info.playersLeft, 3);
    assert.equal(info.levelNumber, 1);
    assert.equal(info.smallBlind, 10);
    assert.equal(info.bigBlind, 20);
    assert.ok(Number(info.levelEndsInMs) > 0 && Number(info.levelEndsInMs) <= 600000);
    assert.ok((info.payouts ?? []).length > 0, "payouts");
    assert.equal((info.payouts ?? []).reduce((n, p) => n + (p.placeTo! - p.placeFrom! + 1) * Number(p.amount), 0), 300);

    const late = await player(714);
    await assert.rejects(late.registerTournament(s), refusedWith(croupier.ErrorCode.REGISTRATION_CLOSED));
    await assert.rejects(cs[1].unregisterTournament(s), refusedWith(croupier.ErrorCode.REGISTRATION_CLOSED));

    const cancelled = cs.map((c) => nextTourEvent(c, s, K.TOUR_EVENT_CANCELLED));
    rig.ctl("tour", "cancel", String(s), "--reason", "sdk test");
    for (const ev of await Promise.all(cancelled))
        assert.match(ev.detail ?? "", /sdk test/);
    /* over: refused from the state, without the director */
    await assert.rejects(late.registerTournament(s), refusedWith(croupier.ErrorCode.TOURNAMENT_OVER));
    const over = await cs[2].getTournament(s);
    assert.equal(over.status, S.TOUR_CANCELLED);
    for (const c of [...cs, late])
        c.close();
});

test("a followed tournament through a gateway SIGTERM: asked again on the other, pushes arrive there", async () => {
    const s = await rig.createTournament("Follow SNG", sng(2));
    const urls = gates.map(rig.url);
    const a = await player(721, 10000, urls);
    await a.registerTournament(s);
    const info = new Promise<croupier.ITournamentInfo>((res) => a.on("tournamentInfo", res));
    const back = new Promise((res) => a.on("reconnected", res));
    gates[0].child.kill("SIGTERM");
    await back;
    const again = await info;
    assert.equal(Number(again.id), s);
    assert.equal(again.you?.state, croupier.TournamentEntryState.TOUR_ENTRY_REGISTERED);
    assert.equal(a.url, urls[1]);
    /* The other player fills it: the push reaches a on the second gateway. */
    const started = nextTourEvent(a, s, K.TOUR_EVENT_STARTED);
    const b = await player(722, 10000, [urls[1]]);
    await b.registerTournament(s);
    assert.equal((await started).playersLeft, 2);
    a.close();
    b.close();
});

const pkg = join(import.meta.dirname, "..", "..");

/* The ```js block of the README's "Tournaments" section. */
function readmeExample(): string {
    const readme = readFileSync(join(pkg, "README.md"), "utf8");
    const at = readme.indexOf("## Tournaments");
    assert.ok(at >= 0, "README.md has a \"Tournaments\" section");
    const m = /```js\n([\s\S]*?)```/.exec(readme.slice(at));
    assert.ok(m !== null, "the Tournaments section has a ```js block");
    return m[1];
}

test("the README's tournaments example is examples/tournaments.mjs and runs as written", async () => {
    assert.equal(readmeExample(), readFileSync(join(pkg, "examples", "tournaments.mjs"), "utf8"));
    const s = await rig.createTournament("Heads-up SNG", sng(2));
    const other = await player(731, 10000, [rig.url(gates[1])]); /* gates[0] was stopped above */
    await other.registerTournament(s);
    await rig.redis(rig.redisPort, "SET {croupier:money}:wallet:732 1000");
    const dir = mkdtempSync(join(tmpdir(), "croupier-tournaments-"));
    try {
        mkdirSync(join(dir, "node_modules", "@croupier"), { recursive: true });
        symlinkSync(pkg, join(dir, "node_modules", "@croupier", "client"), "dir");
        writeFileSync(join(dir, "package.json"), '{"type": "module", "private": true}\n');
        writeFileSync(join(dir, "tournaments.mjs"), readmeExample());
        const out = await new Promise<string>((res, rej) => {
            execFile(process.execPath, ["tournaments.mjs", rig.url(gates[1]), rig.token(732), String(s)],
                { cwd: dir, timeout: 30000 }, (err, stdout, stderr) =>
                    err ? rej(new Error(`${err.message}\n${stdout}\n${stderr}`)) : res(stdout));
        });
        const lines = out.trim().split("\n");
        assert.match(lines[0], /^\d+ of \d+ tournaments open for registration$/, out);
        assert.ok(lines.includes(`#${s} Heads-up SNG: buy-in 100+10, 1/2 entrants`), out);
        assert.ok(lines.includes(`registered in #${s}`), out);
        assert.ok(lines.includes(`#${s}: TOUR_EVENT_STARTED`), out);
        assert.ok(lines.some((l) => /^Heads-up SNG: TOUR_(REGISTERING|RUNNING), 2\/2 entries, prize pool 200$/.test(l)), out);
        assert.ok(lines.some((l) => /^your entry: TOUR_ENTRY_(REGISTERED|PLAYING), stack 1500$/.test(l)), out);
        assert.equal(await rig.wallet(732), 1000 - 110);
    } finally {
        rmSync(dir, { recursive: true, force: true });
        other.close();
    }
});
