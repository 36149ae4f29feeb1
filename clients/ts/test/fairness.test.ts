// Deal commitments (src/fairness.ts, docs/fairness.md "The commitment"): the SDK's check
// against an independent SHA-256 (node:crypto) and against croupier-rules verify-deal and
// verify-shoe, the server side's own implementation (tools/rules/rules_deck.c), on decks and
// blackjack shoes croupier-rules deals through the production path.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { croupier, deckCommitment, shoeCommitment, shoeRecordFromReplay, verifyDeal, verifyRecord, verifyShoe } from "../src/index.js";
import type { ShoeRecord } from "../src/index.js";
import { build } from "./rig.js";

const rules = join(build, "tools", "croupier-rules");
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

function reference(deck: Uint8Array, nonce: Uint8Array, tag = "croupier-deck-v1"): string {
    const n = Buffer.from([deck.length >> 8, deck.length & 0xff]);
    return createHash("sha256").update(tag).update(n).update(deck).update(nonce).digest("hex");
}

/* Decks of a game as croupier-rules deals them (one hex deck a line). */
function deals(game: string, n: number): Uint8Array[] {
    const out = execFileSync(rules, ["deals", game, String(n)], { encoding: "utf8" });
    return out.trim().split("\n").map((l) => Uint8Array.from(Buffer.from(l.trim(), "hex")));
}

test("the commitment is SHA-256 over the documented bytes, for every game's deck", async () => {
    for (const game of ["holdem", "zhajinhua", "doudizhu", "guandan"]) {
        for (const deck of deals(game, 3)) {
            const nonce = randomBytes(32);
            assert.equal(hex(await deckCommitment(deck, nonce)), reference(deck, nonce));
            assert.equal(hex(await deckCommitment(hex(deck), hex(nonce))), reference(deck, nonce));
        }
    }
});

test("croupier-rules verify-deal and the SDK agree: the revealed deck opens it, a changed one does not", async () => {
    const [deck] = deals("holdem", 1);
    const nonce = randomBytes(32);
    const c = await deckCommitment(deck, nonce);
    assert.equal(await verifyDeal(c, deck, nonce), true);
    const ok = spawnSync(rules, ["verify-deal", hex(c), hex(deck), hex(nonce)], { encoding: "utf8" });
    assert.equal(ok.status, 0, ok.stderr);
    /* two cards swapped: the dealing order is what is committed */
    const swapped = Uint8Array.from(deck);
    [swapped[0], swapped[1]] = [swapped[1], swapped[0]];
    assert.equal(await verifyDeal(c, swapped, nonce), false);
    const bad = spawnSync(rules, ["verify-deal", hex(c), hex(swapped), hex(nonce)], { encoding: "utf8" });
    assert.equal(bad.status, 1, bad.stderr);
    const other = Uint8Array.from(nonce);
    other[31] ^= 1;
    assert.equal(await verifyDeal(c, deck, other), false);
    /* a hand-history record, with and without the commitment the player received */
    const record = { deck_commitment: hex(c), deck: hex(deck), deck_nonce: hex(nonce) };
    assert.equal(await verifyRecord(record), true);
    assert.equal(await verifyRecord(record, c), true);
    assert.equal(await verifyRecord(record, new Uint8Array(32)), false);
});

test("bad input is refused with a reason, not taken for a mismatch", async () => {
    const nonce = new Uint8Array(32);
    await assert.rejects(deckCommitment("zz", nonce), /deck: not hex/);
    await assert.rejects(deckCommitment([], nonce), /deck: 0 cards/);
    await assert.rejects(deckCommitment([1, 2], new Uint8Array(31)), /nonce: 31 bytes, 32 expected/);
    await assert.rejects(verifyDeal(new Uint8Array(31), [1], nonce), /commitment: 31 bytes/);
    await assert.rejects(verifyRecord({ deck: "01" }), /no deck_commitment/);
});

test("blackjack shoes: verifyShoe and croupier-rules verify-shoe agree on a shoe and its rounds", async () => {
    const [shoe] = deals("blackjack:1", 1);
    const nonce = randomBytes(32);
    const c = await shoeCommitment(shoe, nonce);
    assert.equal(hex(c), reference(shoe, nonce, "croupier-shoe-v1"));
    assert.notEqual(hex(c), hex(await deckCommitment(shoe, nonce))); /* the tags keep them apart */
    const name = (b: number) => "A23456789TJQK"[b % 13] + "cdhs"[Math.floor(b / 13)];
    const round = (id: string, first: number, count: number, reveal = false): ShoeRecord => ({
        round: id,
        cards: [...shoe.slice(first, first + count)].map((b) => ({ seat: 0, card: name(b) })),
        shoes: [{ shoe: 1, commitment: hex(c), first, count }],
        ...(reveal ? { shoe_reveal: [{ shoe: 1, commitment: hex(c), deck: hex(shoe), nonce: hex(nonce) }] } : {}),
    });
    const records = [round("r1", 0, 5), round("r2", 5, 6), round("r3", 11, 4, true)];
    const v = await verifyShoe(c, records);
    assert.equal(v.ok, true, v.problem);
    assert.equal(v.rounds, 3);
    assert.equal(v.dealt, 15);
    assert.deepEqual(v.gaps, []);
    const dir = mkdtempSync(join(tmpdir(), "shoe-"));
    const run = (recs: ShoeRecord[]) => {
        const file = join(dir, "records.jsonl");
        writeFileSync(file, recs.map((r) => JSON.stringify(r)).join("\n") + "\n");
        return spawnSync(rules, ["verify-shoe", file], { encoding: "utf8" });
    };
    try {
        assert.equal(run(records).status, 0);
        /* a card off its position */
        const bad = structuredClone(records);
        bad[1].cards![2].card = name((shoe[7] + 1) % 52);
        assert.equal((await verifyShoe(c, bad)).ok, false);
        assert.equal(run(bad).status, 1);
        /* a round missing: still checked, the gap named */
        const some = [records[0], records[2]];
        assert.deepEqual((await verifyShoe(c, some)).gaps, [[5, 10]]);
        assert.equal(run(some).status, 0);
        /* not revealed yet: nothing to open */
        const early = await verifyShoe(c, records.slice(0, 2));
        assert.equal(early.ok, false);
        assert.match(early.problem ?? "", /no record reveals/);
        assert.equal(run(records.slice(0, 2)).status, 2);
        /* another commitment (the player's Deals said something else) */
        assert.equal((await verifyShoe(new Uint8Array(32), records)).ok, false);
        /* the table closed between rounds: its shoe retirement record (docs/hand-history.md
         * "Table records") reveals the shoe and how many of its cards were dealt */
        const retirement = (dealt: number): ShoeRecord => ({
            round: "persistent:1:2:3:0", record: "shoe_retirement", cards: [], shoes: [],
            shoe_reveal: [{ shoe: 1, commitment: hex(c), deck: hex(shoe), nonce: hex(nonce), dealt }],
        });
        const closed = [round("r1", 0, 5), round("r2", 5, 6), retirement(11)];
        const vc = await verifyShoe(c, closed);
        assert.equal(vc.ok, true, vc.problem);
        assert.equal(vc.undealtFrom, 11);
        assert.deepEqual(vc.gaps, []);
        assert.equal(run(closed).status, 0);
        assert.match(run(closed).stdout, /positions 11\.\.51 never were/);
        /* a round missing before the close: the gap up to dealt is named */
        assert.deepEqual((await verifyShoe(c, [closed[0], closed[2]])).gaps, [[5, 10]]);
        /* a round that dealt past what the reveal says was dealt */
        const past = [round("r1", 0, 5), round("r2", 5, 6), retirement(10)];
        assert.match((await verifyShoe(c, past)).problem ?? "", /only 10 cards were dealt/);
        assert.equal(run(past).status, 1);
        await assert.rejects(verifyShoe(c, [retirement(53)]), /shoe_reveal\.dealt/);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("blackjack shoes from replays: shoeRecordFromReplay feeds verifyShoe what GetReplay answers", async () => {
    const [shoe] = deals("blackjack:1", 1);
    const nonce = randomBytes(32);
    const c = await shoeCommitment(shoe, nonce);
    /* blackjack's byte (suit x 13 + rank, ace 0) as the wire code (rank << 2 | suit, ace 14) */
    const wire = (b: number) => ((b % 13 === 0 ? 14 : (b % 13) + 1) << 2) | Math.floor(b / 13);
    const replay = (id: string, first: number, count: number, reveal = false): croupier.Replay =>
        croupier.Replay.decode(croupier.Replay.encode({
            roundId: id, game: "blackjack", policy: "all",
            shoes: [{ shoe: 1, commitment: hex(c), first, cards: Uint8Array.from(shoe.slice(first, first + count), wire) }],
            shoeReveal: reveal ? [{ shoe: 1, commitment: hex(c), deck: hex(shoe), nonce: hex(nonce), dealt: first + count }] : [],
        }).finish()); /* through the real codec: the field names are the generated ones */
    const replays = [replay("r1", 0, 5), replay("r2", 5, 6), replay("r3", 11, 4, true)];
    const v = await verifyShoe(c, replays.map(shoeRecordFromReplay));
    assert.equal(v.ok, true, v.problem);
    assert.equal(v.rounds, 3);
    assert.equal(v.dealt, 15);
    assert.equal(v.undealtFrom, 15);
    assert.deepEqual(v.gaps, []);
    /* a card changed in a replay: refused */
    const bad = replays.map((r) => croupier.Replay.decode(croupier.Replay.encode(r).finish()));
    const cards = bad[1].shoes[0].cards as Uint8Array;
    cards[2] = wire((shoe[7] + 1) % 52);
    assert.match((await verifyShoe(c, bad.map(shoeRecordFromReplay))).problem ?? "", /position 7/);
    /* the retiring round's replay missing: nothing opens the shoe */
    assert.match((await verifyShoe(c, replays.slice(0, 2).map(shoeRecordFromReplay))).problem ?? "",
        /no record reveals/);
    /* a card code that is no card */
    assert.throws(() => shoeRecordFromReplay({ shoes: [{ shoe: 1, commitment: hex(c), first: 0, cards: [0] }] }),
        /not a card/);
});
