// 64-bit fields as the SDK hands them out (README "64-bit integers"): numbers, and bigint for
// the desk and session ids; an absent field is a falsy 0, never a protobufjs Long.
import assert from "node:assert/strict";
import { test } from "node:test";

import { croupier } from "../src/index.js";

test("64-bit fields: numbers, desk and session ids bigint, absent ones 0", () => {
    const desk = (3n << 56n) | (7n << 32n) | 5n; /* engine/runtime.c: worker << 56 | slot << 32 | gen */
    const session = (1n << 64n) - 1n;
    const j = croupier.Joined.decode(croupier.Joined.encode({ deskId: desk, seat: 1, engine: 2,
        game: "holdem", stake: 20, seats: [{ seat: 1, playerId: 9, chips: 999970 }] }).finish());
    assert.equal(j.deskId, desk);
    assert.equal(j.stake, 20);
    assert.equal(j.seats[0].playerId, 9);
    assert.equal(j.seats[0].chips, 999970);
    const l = croupier.LoginResult.decode(croupier.LoginResult.encode({ playerId: 5, sessionId: session,
        chips: -3, serverTimeMs: 1796529503434 }).finish());
    assert.equal(l.sessionId, session);
    assert.equal(l.chips, -3);
    assert.equal(l.serverTimeMs, 1796529503434);
    /* absent: 0, falsy (a Long zero is an object and tests true) */
    const bj = croupier.BlackjackState.decode(croupier.BlackjackState.encode({ phase: 1 }).finish());
    assert.equal(bj.minBet, 0);
    assert.ok(!bj.minBet);
    const t = croupier.Turn.decode(croupier.Turn.encode({ seat: 0, timeLeftMs: 100, minAmount: 10 }).finish());
    assert.equal(typeof t.minAmount, "number");
    assert.equal(t.maxAmount, 0);
    assert.equal(croupier.Snapshot.prototype.deskId, 0n);
    /* toJSON writes 64-bit values as strings (protobufjs' JSON options), bigint ones too */
    assert.equal((j.toJSON() as { deskId: string }).deskId, desk.toString());
    assert.equal(croupier.Joined.fromObject({ deskId: desk.toString(), stake: 20n }).deskId, desk);
    assert.equal(croupier.Joined.fromObject({ deskId: desk.toString(), stake: 20n }).stake, 20);
});

test("the games' own messages (croupier.zjh, croupier.niuniu): 64-bit fields numbers too", () => {
    const st = croupier.zjh.ZjhState.decode(croupier.zjh.ZjhState.encode({ inHand: true,
        pot: 1796529503434, seats: [{ seat: 2, stack: 500 }] }).finish());
    assert.equal(st.pot, 1796529503434);
    assert.equal(st.seats[0].stack, 500);
    assert.equal(st.unit, 0);
    assert.ok(!Object.hasOwn(st, "unit"));
    const a = croupier.niuniu.NiuAction.decode(croupier.niuniu.NiuAction.encode({
        move: croupier.niuniu.NiuMove.NIU_BET, amount: 3 }).finish());
    assert.equal(a.amount, 3);
});
