// Zha Jin Hua's own messages (games/zhajinhua/zhajinhua.proto), which travel inside the client
// protocol's game-neutral envelope (docs/protocol.md "Games on the table kit: ENGINE_GAME"): a
// ZjhAction is the body of Action.game (and of the Play that broadcasts it), a ZjhState the body
// of Snapshot.game_state, a ZjhEvent the body of ServerMessage.game_event. The SDK carries these
// bodies as bytes; its protobufjs code generated from the game's .proto (croupier.zjh) writes
// and reads them, and this file turns them into the plain views the page draws. A malformed
// body throws a RangeError (src/gamebody.ts).
import { croupier } from "@croupier/client";

import { checkUint, decodeBody, present } from "./gamebody.js";

const pb = croupier.zjh;

/** The moves, by the page's names, with the values of the .proto's ZjhMove. */
export enum ZjhMove {
    FOLD = pb.ZjhMove.ZJH_FOLD,
    /* pay the unit (twice once looked); an all-in call when the stack is short */
    CALL = pb.ZjhMove.ZJH_CALL,
    /* unit: the new unit, above the current one, at most the cap */
    RAISE = pb.ZjhMove.ZJH_RAISE,
    /* look at one's own cards: any time, also out of turn, once */
    LOOK = pb.ZjhMove.ZJH_LOOK,
    /* target: the live seat to compare with; from betting round 2 */
    COMPARE = pb.ZjhMove.ZJH_COMPARE,
}

export interface ZjhAction {
    move: ZjhMove;
    unit?: number;
    target?: number;
}

export interface ZjhSeat {
    seat: number;
    stack: number;
    putIn: number;
    looked: boolean;
    folded: boolean;
    allIn: boolean;
}

export interface ZjhState {
    inHand: boolean;
    bettingRound: number;
    unit: number;
    pot: number;
    dealerSeat: number | null;
    ante: number;
    maxUnit: number;
    maxRounds: number;
    ownCards: number[];
    seats: ZjhSeat[];
    toCall: number | null;
    canCompare: boolean;
}

/* ---- the messages ------------------------------------------------------------------------ */

/** A ZjhAction as the body of Action.game. */
export function encodeAction(a: ZjhAction): Uint8Array {
    const m: croupier.zjh.IZjhAction = { move: checkUint("zjh", "move", a.move, 0x7fffffff) };
    if (a.unit !== undefined)
        m.unit = checkUint("zjh", "unit", a.unit, Number.MAX_SAFE_INTEGER);
    if (a.target !== undefined)
        m.target = checkUint("zjh", "target", a.target, 0xffffffff);
    return pb.ZjhAction.encode(m).finish();
}

/** The ZjhAction of a Play's Action.game body. */
export function decodeAction(body: Uint8Array): ZjhAction {
    const m = decodeBody("zjh", "ZjhAction", pb.ZjhAction, body);
    if (!(m.move in ZjhMove))
        throw new RangeError(`zjh: an action without a known move (${m.move})`);
    const a: ZjhAction = { move: m.move as number as ZjhMove };
    if (present(m, "unit"))
        a.unit = m.unit;
    if (present(m, "target"))
        a.target = m.target;
    return a;
}

/** The ZjhState of a Snapshot's game_state body: an absent number reads as 0, or as null for
 * the dealer seat and the amount to call. */
export function decodeState(body: Uint8Array): ZjhState {
    const m = decodeBody("zjh", "ZjhState", pb.ZjhState, body);
    return {
        inHand: m.inHand,
        bettingRound: m.bettingRound,
        unit: m.unit,
        pot: m.pot,
        dealerSeat: present(m, "dealerSeat") ? m.dealerSeat : null,
        ante: m.ante,
        maxUnit: m.maxUnit,
        maxRounds: m.maxRounds,
        ownCards: Array.from(m.ownCards),
        seats: m.seats.map((s) => ({ seat: s.seat, stack: s.stack ?? 0, putIn: s.putIn ?? 0,
                                    looked: s.looked ?? false, folded: s.folded ?? false,
                                    allIn: s.allIn ?? false })),
        toCall: present(m, "toCall") ? m.toCall : null,
        canCompare: m.canCompare,
    };
}

/** A ZjhEvent (ServerMessage.game_event body): one of its kinds. */
export type ZjhEvent =
    | { kind: "looked"; seat: number }
    | { kind: "cards"; seat: number; cards: number[] }
    | { kind: "compared"; asker: number; target: number; loser: number; askerCards: number[];
        targetCards: number[]; allIn: boolean }
    | { kind: "allIn"; seat: number; won: boolean }
    | { kind: "round"; bettingRound: number };

/** The ZjhEvent of a game_event body. */
export function decodeEvent(body: Uint8Array): ZjhEvent {
    const m = decodeBody("zjh", "ZjhEvent", pb.ZjhEvent, body);
    const cards = (b: Uint8Array | null | undefined) => Array.from(b ?? []);
    if (m.looked)
        return { kind: "looked", seat: m.looked.seat };
    if (m.cards)
        return { kind: "cards", seat: m.cards.seat, cards: cards(m.cards.cards) };
    if (m.compared) {
        const c = m.compared;
        return { kind: "compared", asker: c.asker, target: c.target, loser: c.loser,
                 askerCards: cards(c.askerCards), targetCards: cards(c.targetCards),
                 allIn: c.allIn ?? false };
    }
    if (m.allIn)
        return { kind: "allIn", seat: m.allIn.seat, won: m.allIn.won };
    if (m.round)
        return { kind: "round", bettingRound: m.round.bettingRound };
    throw new RangeError("zjh: an event of no known kind");
}
