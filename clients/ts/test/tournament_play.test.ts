// Playing a tournament through the SDK's playTournament (docs/protocol.md "Tournaments", "At the
// table") against a real redis-server, a real croupier-director, a real croupier-gate and a real
// croupier-game --engine holdem that hosts the tournament's table (test/rig.ts; absent players'
// moves after 2 ms, no gap between hands, levels of 0.7 s whose blinds finish the field). A client
// registers in a 4-player sit & go and calls playTournament before it is full: it waits
// ("waiting", NOT_SEATED asked again), the three others register and stay away (their seats are
// played by the automatic move), the Snapshot of the table resolves the call ("seated"), the
// client plays its Turns with check / call and the helper ends with its place ("finished"): the
// place and prize its entry shows, its ELIMINATED or FINISHED push. Also: a Leave at a tournament
// table refused (the seat kept), a call for a tournament the player is not in rejected
// NOT_REGISTERED, one that cannot seat him within its timeout rejected DEADLINE_EXCEEDED, and an
// AbortSignal that stops the wait. The README's "Playing a tournament" example is
// examples/play_tournament.mjs and plays a heads-up sit & go as written, outside the repository.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Client, CroupierError, croupier } from "../src/index.js";
import type { TournamentSeatEvent } from "../src/index.js";
import * as rig from "./rig.js";

/* The levels run on the clock from the start: the first is long enough for the table to be
 * claimed and dealt and the player to act at least once even on loaded cores (with 700 ms, a
 * late first deal came at a level whose antes put every stack all in: no Turn at all). */
const LEVELS = [
    { small_blind: 10, big_blind: 20, duration_ms: 4000 },
    { small_blind: 50, big_blind: 100, duration_ms: 700 },
    { small_blind: 200, big_blind: 400, ante: 50, duration_ms: 700 },
    { small_blind: 1000, big_blind: 2000, ante: 200, duration_ms: 700 },
    { small_blind: 10000, big_blind: 20000, ante: 2000, duration_ms: 700 },
    { small_blind: 100000, big_blind: 200000, ante: 20000, duration_ms: 700 },
];
const sng = (n: number, levels: object[] = LEVELS) => ({ format: "sng", seats_per_table: n,
    starting_stack: 1500, buy_in: 100, fee: 10, min_entrants: n, max_entrants: n, levels });
const H = croupier.HoldemMove;

let gate: rig.Proc;
const clients: Client[] = [];

before(async () => {
    await rig.startRedis();
    await rig.startDirector("sdk-play-dir");
    await rig.startGame("holdem", ["--holdem-trustee-ms", "2", "--holdem-gap-ms", "0",
                                   "--holdem-action-ms", "2000", "--holdem-tour-host-ttl-ms", "1200"]);
    gate = await rig.startGate("sdk-play");
});
after(async () => {
    for (const c of clients)
        c.close();
    await rig.stopAll();
});

async function player(id: number): Promise<Client> {
    await rig.redis(rig.redisPort, `SET {croupier:money}:wallet:${id} 10000`);
    const c = new Client({ urls: [rig.url(gate)], token: () => rig.token(id) });
    clients.push(c);
    await c.connect();
    return c;
}

function refusedWith(code: croupier.ErrorCode) {
    return (e: unknown) => {
        assert.ok(e instanceof CroupierError, String(e));
        assert.equal(e.codeName, croupier.ErrorCode[code], e.message);
        return true;
    };
}

test("a 4-player sit & go played with playTournament: waiting, seated, Turns played, the place", async (t) => {
    const s = await rig.createTournament("Play SNG", sng(4));
    const me = await player(801);
    await me.registerTournament(s);
    const events: TournamentSeatEvent[] = [];
    let mySeat = -1, deskId = 0n, hands = 0, moves = 0;
    const done = new Promise<TournamentSeatEvent>((res) => me.on("tournamentSeat", (ev) => {
        events.push(ev);
        if (ev.kind === "seated") {
            mySeat = ev.snapshot.yourSeat ?? -1;
            deskId = ev.deskId;
        }
        if (ev.kind === "finished" || ev.kind === "stopped")
            res(ev);
    }));
    me.on("roundEnd", () => hands++);
    /* check when nothing is to call, else call (all in when the stack is short) */
    me.on("turn", (t) => {
        if (t.seat !== mySeat)
            return;
        moves++;
        const move = Number(t.toCall ?? 0) > 0 ? H.HOLDEM_CALL : H.HOLDEM_CHECK;
        me.act({ holdem: { move } }).catch(() => {}); /* a Turn of a hand already over */
    });
    const seated = me.playTournament(s, { timeoutMs: 60000 });
    /* not full yet: the helper waits */
    for (let i = 0; i < 100 && !events.some((e) => e.kind === "waiting"); i++)
        await rig.sleep(20);
    assert.equal(events[0]?.kind, "waiting", JSON.stringify(events));
    const others = [await player(802), await player(803), await player(804)];
    for (const o of others) {
        await o.registerTournament(s);
        o.close(); /* absent: their seats are played by the automatic move */
    }
    const snap = await seated;
    assert.equal(snap.engine, croupier.Engine.ENGINE_HOLDEM);
    assert.equal(snap.game, "holdem");
    /* (HoldemState only while a hand is dealt: the table may be between hands) */
    assert.ok((snap.seats ?? []).some((x) => x.seat === snap.yourSeat && Number(x.playerId) === 801),
              "the player at his seat");
    assert.equal(snap.deskId, deskId);
    assert.equal(snap.yourSeat, mySeat);
    assert.ok(events.some((e) => e.kind === "seated"));
    /* a tournament seat is not left: refused, the seat kept */
    await assert.rejects(me.leave(), refusedWith(croupier.ErrorCode.BAD_REQUEST));

    let timer: ReturnType<typeof setTimeout> | undefined;
    const end = await Promise.race([done, new Promise<null>((res) => (timer = setTimeout(res, 90000, null)))]);
    clearTimeout(timer);
    t.diagnostic(`${JSON.stringify(end)}; ${hands} hands, ${moves} moves`);
    assert.ok(end !== null, `the tournament did not end for the player: ${JSON.stringify(events.map((e) => e.kind))}`);
    assert.equal(end.kind, "finished", JSON.stringify(end));
    if (end.kind !== "finished")
        return;
    assert.ok(end.place >= 1 && end.place <= 4, `place ${end.place}`);
    assert.equal(end.won, end.place === 1);
    assert.ok(["ELIMINATED", "FINISHED", "TOURNAMENT_OVER"].includes(end.reason), end.reason);
    assert.ok(hands > 0 && moves > 0, `hands ${hands}, moves ${moves}`);
    const info = await me.getTournament(s);
    assert.equal(Number(info.you?.place), end.place, "the place the entry shows");
    assert.equal(Number(info.you?.prize ?? 0), end.prize, "the prize the entry shows");
    assert.equal(events.filter((e) => e.kind === "finished" || e.kind === "stopped").length, 1);
    /* followed no more: asking again is the gateway's answer, not the helper's */
    await assert.rejects(me.takeTournamentSeat(s), refusedWith(croupier.ErrorCode.TOURNAMENT_OVER));
    me.close();
});

test("playTournament without an entry, past its timeout, aborted", async () => {
    const slow = [{ small_blind: 10, big_blind: 20, duration_ms: 600000 }];
    const s = await rig.createTournament("Never full", sng(3, slow));
    const c = await player(811);
    await assert.rejects(c.playTournament(s), refusedWith(croupier.ErrorCode.NOT_REGISTERED));
    await assert.rejects(c.playTournament(987654), refusedWith(croupier.ErrorCode.NO_SUCH_TOURNAMENT));
    await assert.rejects(c.playTournament(0), refusedWith(croupier.ErrorCode.BAD_REQUEST));
    await c.registerTournament(s);
    const t0 = Date.now();
    await assert.rejects(c.playTournament(s, { timeoutMs: 1200 }), (e: unknown) =>
        refusedWith(croupier.ErrorCode.DEADLINE_EXCEEDED)(e) && (e as CroupierError).retriable);
    assert.ok(Date.now() - t0 >= 1000, "asked until the timeout");
    const ac = new AbortController();
    const stopped = new Promise<TournamentSeatEvent>((res) => c.on("tournamentSeat", (ev) => {
        if (ev.kind === "stopped")
            res(ev);
    }));
    const p = c.playTournament(s, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error("the person went away")), 400);
    await assert.rejects(p, /the person went away/);
    assert.match((await stopped as { error: Error }).error.message, /the person went away/);
    assert.ok((await c.ping()) > 0, "the connection kept");
    c.close();
});

const pkg = join(import.meta.dirname, "..", "..");

/* The ```js block after "**Playing a tournament.**" in the README. */
function readmeExample(): string {
    const readme = readFileSync(join(pkg, "README.md"), "utf8");
    const at = readme.indexOf("**Playing a tournament.**");
    assert.ok(at >= 0, "README.md says how to play a tournament");
    const m = /```js\n([\s\S]*?)```/.exec(readme.slice(at));
    assert.ok(m !== null, "with a ```js block");
    return m[1];
}

test("the README's playing example is examples/play_tournament.mjs and plays to the end", async () => {
    assert.equal(readmeExample(), readFileSync(join(pkg, "examples", "play_tournament.mjs"), "utf8"));
    const s = await rig.createTournament("Heads-up play", sng(2));
    const me = await player(821);
    await me.registerTournament(s);
    me.close();
    const other = await player(822);
    await other.registerTournament(s);
    other.close();
    const dir = mkdtempSync(join(tmpdir(), "croupier-play-"));
    try {
        mkdirSync(join(dir, "node_modules", "@croupier"), { recursive: true });
        symlinkSync(pkg, join(dir, "node_modules", "@croupier", "client"), "dir");
        writeFileSync(join(dir, "package.json"), '{"type": "module", "private": true}\n');
        writeFileSync(join(dir, "play_tournament.mjs"), readmeExample());
        const out = await new Promise<string>((res, rej) => {
            execFile(process.execPath, ["play_tournament.mjs", rig.url(gate), rig.token(821), String(s)],
                { cwd: dir, timeout: 90000 }, (err, stdout, stderr) =>
                    err ? rej(new Error(`${err.message}\n${stdout}\n${stderr}`)) : res(stdout));
        });
        const lines = out.trim().split("\n");
        assert.ok(lines.some((l) => /^seated at table \d+, seat [12]$/.test(l)), out);
        const last = lines[lines.length - 1];
        const info = await (await player(823)).getTournament(s);
        assert.equal(info.status, croupier.TournamentStatus.TOUR_FINISHED, out);
        const mine = await player(821);
        const you = (await mine.getTournament(s)).you;
        assert.equal(last, Number(you?.place) === 1 ? `won: prize ${Number(you?.prize)}`
            : `out: place ${Number(you?.place)}, prize ${Number(you?.prize ?? 0)}`, out);
        mine.close();
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
