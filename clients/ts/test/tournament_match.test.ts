// A match hall through the SDK (docs/protocol.md "Match halls") against a real redis-server, a
// real croupier-director, a real croupier-gate and a real croupier-game --engine traditional
// that hosts the match's table (test/rig.ts; a turn of 300 ms, then the trustee). Three clients
// register in a Dou Dizhu match of 3 (one 定局积分 round of 2 deals, the final) and call
// playTournament: each is seated at the table (the deal waits for the three), its seat's chips
// show its score, getTournament shows the match's stage, and each ends "finished" with the place
// and prize its entry shows, and the item of its place (places 1 and 3 carry one,
// docs/tournaments.md "Items"); the prizes are the pool. The clients let the turn timer play
// them.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, CroupierError, croupier, verifyDealCards } from "../src/index.js";
import type { TournamentSeatEvent } from "../src/index.js";
import * as rig from "./rig.js";

const MATCH3 = { format: "match", game: "doudizhu", buy_in: 100, fee: 10, min_entrants: 3,
                 max_entrants: 3,
                 payouts: { items: [{ place: 1, item: "trophy:gold" }, { place: 3, item: "ticket:final-2027" }] },
                 stages: [{ format: "fixed", seats: 3, deals_per_round: 2 }] };
const ITEMS: Record<number, string | undefined> = { 1: "trophy:gold", 3: "ticket:final-2027" };

let gate: rig.Proc;
const clients: Client[] = [];

before(async () => {
    await rig.startRedis();
    await rig.startDirector("sdk-match-dir");
    await rig.startGame("traditional", ["--trad-action-ms", "300", "--trad-trustee-ms", "20",
                                        "--trad-gap-ms", "0", "--trad-tour-join-ms", "8000",
                                        "--trad-tour-host-ttl-ms", "1200"]);
    gate = await rig.startGate("sdk-match");
});
after(async () => {
    for (const c of clients)
        c.close();
    await rig.stopAll();
});

async function player(id: number): Promise<Client> {
    await rig.redis(rig.redisPort, `SET {croupier:money}:wallet:${id} 1000`);
    const c = new Client({ urls: [rig.url(gate)], token: () => rig.token(id) });
    clients.push(c);
    await c.connect();
    return c;
}

test("a Dou Dizhu match of 3 played with playTournament: seated, the stage, every place", async (t) => {
    const id = await rig.createTournament("Hall", MATCH3);
    const players = [await player(901), await player(902), await player(903)];
    const ends: Promise<TournamentSeatEvent>[] = [];
    const seen: TournamentSeatEvent[][] = [[], [], []];
    for (const [i, c] of players.entries()) {
        await c.registerTournament(id);
        ends.push(new Promise((res) => c.on("tournamentSeat", (ev) => {
            seen[i].push(ev);
            if (ev.kind === "finished" || ev.kind === "stopped")
                res(ev);
        })));
    }
    const snaps = await Promise.all(players.map((c) => c.playTournament(id, { timeoutMs: 30000 })));
    for (const s of snaps) {
        assert.equal(s.engine, croupier.Engine.ENGINE_TRADITIONAL);
        assert.equal(s.game, "doudizhu");
        /* a match's seat shows the score: 0 at the stage's start */
        for (const x of s.seats ?? [])
            assert.equal(Number(x.chips), 0);
    }
    const info = await players[0].getTournament(id);
    assert.equal(info.format, croupier.TournamentFormat.TOUR_MATCH);
    assert.equal(info.game, "doudizhu");
    assert.equal(info.match?.format, "fixed");
    assert.equal(info.match?.stages, 1);
    assert.deepEqual((info.itemPrizes ?? []).map((p) => [p.place, p.item]),
                     [[1, "trophy:gold"], [3, "ticket:final-2027"]]);
    assert.ok(info.you?.score !== undefined && info.you?.score !== null, "the asker's score");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const all = await Promise.race([Promise.all(ends),
        new Promise<null>((res) => (timer = setTimeout(res, 60000, null)))]);
    clearTimeout(timer);
    assert.ok(all !== null, `not finished: ${JSON.stringify(seen.map((s) => s.map((e) => e.kind)))}`);
    t.diagnostic(JSON.stringify(all));
    let prizes = 0;
    for (const [i, end] of all.entries()) {
        assert.equal(end.kind, "finished", JSON.stringify(end));
        if (end.kind !== "finished")
            continue;
        assert.ok(end.place >= 1 && end.place <= 3, `place ${end.place}`);
        prizes += end.prize;
        const mine = await players[i].getTournament(id);
        assert.equal(Number(mine.you?.place), end.place);
        assert.equal(Number(mine.you?.prize ?? 0), end.prize);
        assert.equal(end.item, ITEMS[end.place]);
        assert.equal(mine.you?.item || undefined, ITEMS[end.place]);
        assert.ok(seen[i].some((e) => e.kind === "seated"));
    }
    assert.equal(prizes, 300);
});

/* A duplicate Swiss stage (docs/rules/match-halls.md "Duplicate"): its deals are committed per
 * card (docs/fairness.md "Duplicate deals"), so each player checks the cards he was dealt from
 * his own replay against the commitment his Deals carried. */
const DUP3 = { format: "match", game: "doudizhu", buy_in: 100, fee: 10, min_entrants: 3,
               max_entrants: 3,
               stages: [{ format: "swiss", seats: 3, rounds: 1, deals_per_round: 2, duplicate: true }] };

test("a duplicate Swiss deal: per-card Deals, and each player's replay opens his hand against their commitment", async () => {
    const id = await rig.createTournament("Dup", DUP3);
    const players = [await player(921), await player(922), await player(923)];
    const deals = players.map(() => new Map<string, { commitment: Uint8Array; hand?: number[] }>());
    const ends: Promise<TournamentSeatEvent>[] = [];
    for (const [i, c] of players.entries()) {
        c.on("deal", (d) => {
            const round = String(d.roundId ?? "");
            assert.equal(Number(d.deckScheme), 2, "a duplicate deal's Deals say deck_scheme 2");
            assert.equal(d.deckCommitment?.length, 32);
            const got = deals[i].get(round) ?? { commitment: d.deckCommitment! };
            assert.deepEqual(got.commitment, d.deckCommitment, "one commitment a deal");
            if (d.cards && d.cards.length > 3)
                got.hand = Array.from(d.cards); /* his own hand (the bottom is 3 cards) */
            deals[i].set(round, got);
        });
        await c.registerTournament(id);
        ends.push(new Promise((res) => c.on("tournamentSeat", (ev) => {
            if (ev.kind === "finished" || ev.kind === "stopped")
                res(ev);
        })));
    }
    await Promise.all(players.map((c) => c.playTournament(id, { timeoutMs: 30000 })));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const all = await Promise.race([Promise.all(ends),
        new Promise<null>((res) => (timer = setTimeout(res, 60000, null)))]);
    clearTimeout(timer);
    assert.ok(all !== null, "the match did not finish");
    let checked = 0;
    for (const [i, c] of players.entries()) {
        assert.ok(deals[i].size >= 2, `player ${i} saw ${deals[i].size} deals`);
        for (const [roundId, d] of deals[i]) {
            let replay: croupier.IReplay | undefined;
            for (let k = 0; replay === undefined; k++) {
                try {
                    replay = await c.getReplay({ roundId, game: "doudizhu" });
                } catch (e) {
                    if (!(e instanceof CroupierError) || e.code !== croupier.ErrorCode.NO_SUCH_ROUND || k >= 100)
                        throw e;
                    await rig.sleep(50);
                }
            }
            assert.equal(replay.policy, "own");
            const v = await verifyDealCards(replay as croupier.Replay, d.commitment);
            assert.equal(v.ok, true, v.problem);
            const me = Number(replay.yourSeat);
            const mine = v.checked.filter((x) => x.seat === me);
            assert.equal(mine.length, 17, "his 17 cards opened");
            assert.ok(mine.every((x) => x.position % 3 === me && x.position < 51), "at his seat's positions");
            assert.deepEqual(mine.map((x) => x.card).sort((a, b) => a - b), [...d.hand!].sort((a, b) => a - b),
                "the cards his Deal showed him");
            assert.ok(v.checked.every((x) => x.seat === me || x.seat === -1), "nobody else's card opened");
            checked++;
        }
    }
    assert.ok(checked >= 6);
});
