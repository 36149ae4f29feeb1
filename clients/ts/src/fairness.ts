// Deal commitments (docs/fairness.md "The commitment"): before the first card of a round the
// server sends SHA-256("croupier-deck-v1" || n as 2 bytes big-endian || the n deck bytes in
// dealing order || a 32-byte nonce) on every Deal (`deal.deckCommitment`) and on a mid-round
// Snapshot (`snapshot.deckCommitment`); the hand history reveals the deck and the nonce after
// the round. These helpers let a player check that the revealed deck is the one committed to
// before the deal. What it proves, and what it does not (the operator still knows the cards):
// docs/fairness.md.

const TAG = new TextEncoder().encode("croupier-deck-v1");
/** Blackjack's shoes (docs/fairness.md "Blackjack's shoes"): the same construction, this tag. */
const SHOE_TAG = new TextEncoder().encode("croupier-shoe-v1");
/** Bytes of a commitment (SHA-256) and of the nonce. */
export const COMMITMENT_BYTES = 32;
export const NONCE_BYTES = 32;
/** The largest deck the servers deal from (docs/fairness.md). */
export const MAX_DECK_CARDS = 416;

type Bytes = Uint8Array | ArrayLike<number>;

function bytes(what: string, v: Bytes | string, len?: number): Uint8Array {
    let out: Uint8Array;
    if (typeof v === "string") {
        if (!/^(?:[0-9a-fA-F]{2})*$/.test(v))
            throw new TypeError(`${what}: not hex (two digits a byte)`);
        out = new Uint8Array(v.length / 2);
        for (let i = 0; i < out.length; i++)
            out[i] = parseInt(v.slice(2 * i, 2 * i + 2), 16);
    } else {
        out = Uint8Array.from(v as ArrayLike<number>);
    }
    if (len !== undefined && out.length !== len)
        throw new RangeError(`${what}: ${out.length} bytes, ${len} expected`);
    return out;
}

function subtle(): SubtleCrypto {
    const c = (globalThis as { crypto?: Crypto }).crypto;
    if (c?.subtle === undefined)
        throw new Error("no WebCrypto here (globalThis.crypto.subtle): Node 20+ or a browser over https/localhost");
    return c.subtle;
}

async function commit(tag: Uint8Array, deck: Bytes | string, nonce: Bytes | string): Promise<Uint8Array> {
    const d = bytes("deck", deck);
    if (d.length < 1 || d.length > MAX_DECK_CARDS)
        throw new RangeError(`deck: ${d.length} cards, 1..${MAX_DECK_CARDS} expected`);
    const n = bytes("nonce", nonce, NONCE_BYTES);
    const msg = new Uint8Array(tag.length + 2 + d.length + n.length);
    msg.set(tag, 0);
    msg[tag.length] = d.length >> 8;
    msg[tag.length + 1] = d.length & 0xff;
    msg.set(d, tag.length + 2);
    msg.set(n, tag.length + 2 + d.length);
    return new Uint8Array(await subtle().digest("SHA-256", msg));
}

/** The commitment of a deck (card bytes in dealing order) and its nonce; both as bytes or hex. */
export async function deckCommitment(deck: Bytes | string, nonce: Bytes | string): Promise<Uint8Array> {
    return commit(TAG, deck, nonce);
}

/** The commitment of a blackjack shoe (its order, blackjack's card bytes) and its nonce. */
export async function shoeCommitment(shoe: Bytes | string, nonce: Bytes | string): Promise<Uint8Array> {
    return commit(SHOE_TAG, shoe, nonce);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
    let diff = a.length ^ b.length;
    for (let i = 0; i < a.length && i < b.length; i++)
        diff |= a[i] ^ b[i];
    return diff === 0;
}

/**
 * Whether a revealed deck and nonce open the commitment a player received before the deal
 * (`Deal.deckCommitment`). Bad input (not hex, wrong lengths) throws; a mismatch is `false`.
 */
export async function verifyDeal(commitment: Bytes | string, deck: Bytes | string,
    nonce: Bytes | string): Promise<boolean> {
    const c = bytes("commitment", commitment, COMMITMENT_BYTES);
    const got = await deckCommitment(deck, nonce);
    let diff = 0;
    for (let i = 0; i < COMMITMENT_BYTES; i++)
        diff |= got[i] ^ c[i];
    return diff === 0;
}

/** The deck fields of a hand-history record (docs/hand-history.md). */
export interface DeckRecord {
    game?: string;
    button?: number;
    tournament?: { button?: number };
    seats?: { seat: number }[];
    cards?: { seat: number; card: string }[];
    deck_commitment?: string;
    deck?: string;
    deck_nonce?: string;
    /** 2: the per-card commitment (hold'em, Zha Jin Hua), whose leaves hash `deck_codes`. */
    deck_scheme?: number;
    deck_codes?: string;
}

/**
 * The same check on a hand-history record (docs/hand-history.md: `deck_commitment`, `deck`,
 * `deck_nonce`, hex). `expected`: the commitment the player received on the round's Deal; when
 * given it must equal the record's (else a record could carry a commitment of its own). A
 * per-card record (`deck_scheme` 2) is checked as `croupier-rules verify-deal --record` does:
 * the leaves of `deck_codes` under the nonce (`deckCardLeaves()`) give the commitment, and every
 * recorded card is the committed card at its dealing position (`dealPosition()`).
 */
export async function verifyRecord(record: DeckRecord, expected?: Bytes | string): Promise<boolean> {
    if (!record.deck_commitment || !record.deck || !record.deck_nonce)
        throw new TypeError("record: no deck_commitment, deck and deck_nonce (a round dealt without a commitment?)");
    if (expected !== undefined) {
        const e = bytes("expected", expected, COMMITMENT_BYTES);
        const r = bytes("deck_commitment", record.deck_commitment, COMMITMENT_BYTES);
        if (e.some((b, i) => b !== r[i]))
            return false;
    }
    if (record.deck_scheme !== 2)
        return verifyDeal(record.deck_commitment, record.deck, record.deck_nonce);
    if (!record.deck_codes || !record.game)
        throw new TypeError("record: a per-card record (deck_scheme 2) without deck_codes or game");
    const codes = bytes("deck_codes", record.deck_codes);
    const root = await leavesCommitment(await deckCardLeaves(codes, record.deck_nonce));
    if (!sameBytes(root, bytes("deck_commitment", record.deck_commitment, COMMITMENT_BYTES)))
        return false;
    const seats = (record.seats ?? []).map((s) => s.seat);
    const button = record.tournament?.button ?? record.button ?? -1;
    const per = new Map<number, number>();
    const used = new Set<number>();
    for (const c of record.cards ?? []) {
        const k = per.get(c.seat) ?? 0;
        per.set(c.seat, k + 1);
        const seat = c.seat < 0 ? -1 : c.seat;
        let pos = dealPosition(record.game, button, seats, seat, k);
        if (pos < 0)
            throw new TypeError(`record: ${record.game} gives no dealing position for seat ${c.seat}'s card ${k}`);
        if (dealtAsSet(record.game)) {
            /* A shedding game records each hand as a set: the card is at one of its seat's
             * positions, each position once. */
            for (let j = 0; ; j++) {
                const p = dealPosition(record.game, button, seats, seat, j);
                if (p < 0)
                    return false;
                if (!used.has(p) && p < codes.length && codes[p] === cardCode(c.card)) {
                    pos = p;
                    break;
                }
            }
            used.add(pos);
        }
        if (pos >= codes.length || codes[pos] !== cardCode(c.card))
            return false;
    }
    return true;
}

/** A hand-history card ("As", "Td") as the protocol's code (rank << 2 | suit), or -1. */
function cardCode(text: string | undefined): number {
    if (text === undefined || text.length !== 2)
        return -1;
    if (text === "Xb" || text === "Xr")
        return (15 << 2) | (text === "Xr" ? 1 : 0); /* the jokers (docs/protocol.md "Cards") */
    const r = "23456789TJQKA".indexOf(text[0]), u = "cdhs".indexOf(text[1]);
    return r < 0 || u < 0 ? -1 : ((r + 2) << 2) | u;
}

/** A blackjack hand-history record's shoe fields (docs/hand-history.md "Blackjack's shoes"). */
export interface ShoeRecord {
    round?: string;
    cards?: { seat: number; card: string }[];
    shoes?: { shoe: number; commitment: string; first: number; count: number }[];
    /** `dealt`: the cards of the shoe dealt before it was retired (absent in older records). */
    shoe_reveal?: { shoe: number; commitment: string; deck: string; nonce: string; dealt?: number }[];
    /** `"shoe_retirement"`: a table record revealing the shoe of a table that closed between
     * rounds (docs/hand-history.md "Table records"); absent in a round's record. */
    record?: string;
}

/** What verifyShoe found: `ok` only when the shoe opens and every round matches. */
export interface ShoeVerdict {
    ok: boolean;
    /** The shoe's cards, in order (blackjack's card bytes: suit × 13 + rank, ace 0). */
    shoe?: Uint8Array;
    /** Rounds of the shoe found among the records, and the cards they dealt. */
    rounds: number;
    dealt: number;
    /** Positions no given record dealt (before the last one dealt, or before the reveal's
     * `dealt`): [from, to] inclusive. */
    gaps: [number, number][];
    /** The reveal's `dealt`: positions from here on were never dealt (absent: not said). */
    undealtFrom?: number;
    /** Why not ok. */
    problem?: string;
}

/** A hand-history card ("As", "Td") as blackjack's card byte, or -1. */
function shoeCard(text: string | undefined): number {
    if (text === undefined || text.length !== 2)
        return -1;
    const r = "A23456789TJQK".indexOf(text[0]), u = "cdhs".indexOf(text[1]);
    return r < 0 || u < 0 ? -1 : u * 13 + r;
}

/**
 * Checks one blackjack shoe against the hand-history records of its rounds (the same check as
 * `croupier-rules verify-shoe`): the record that retired the shoe (a round's, or the table's
 * shoe retirement record when it closed between rounds) reveals its order and nonce,
 * which must open `commitment` (the one the player received on the Deals, `deal.deckCommitment`);
 * then every round of that shoe among `records` must have dealt exactly the shoe's cards at its
 * recorded positions, no position twice and none at or past the reveal's `dealt`. Bad input (not
 * hex, wrong lengths, a `dealt` outside the shoe) throws.
 */
export async function verifyShoe(commitment: Bytes | string, records: ShoeRecord[]): Promise<ShoeVerdict> {
    const c = bytes("commitment", commitment, COMMITMENT_BYTES);
    const verdict: ShoeVerdict = { ok: false, rounds: 0, dealt: 0, gaps: [] };
    const reveal = records.flatMap((r) => r.shoe_reveal ?? [])
        .find((x) => sameBytes(bytes("shoe_reveal.commitment", x.commitment, COMMITMENT_BYTES), c));
    if (reveal === undefined)
        return { ...verdict, problem: "no record reveals this shoe (yet): include the round that retired it" };
    const shoe = bytes("shoe_reveal.deck", reveal.deck);
    const dealtMax = reveal.dealt ?? shoe.length;
    if (!Number.isInteger(dealtMax) || dealtMax < 0 || dealtMax > shoe.length)
        throw new RangeError(`shoe_reveal.dealt: ${reveal.dealt}, 0..${shoe.length} expected`);
    if (!sameBytes(await shoeCommitment(shoe, reveal.nonce), c))
        return { ...verdict, problem: "the revealed order and nonce do not open the commitment" };
    verdict.shoe = shoe;
    if (reveal.dealt !== undefined)
        verdict.undealtFrom = reveal.dealt;
    const segs: { first: number; count: number; round?: string }[] = [];
    for (const rec of records) {
        let at = 0;
        for (const s of rec.shoes ?? []) {
            if (!sameBytes(bytes("shoes.commitment", s.commitment, COMMITMENT_BYTES), c)) {
                at += s.count;
                continue;
            }
            if (s.first < 0 || s.count < 1 || s.first + s.count > shoe.length)
                return { ...verdict, problem: `round ${rec.round}: positions ${s.first}+${s.count} are not in the shoe` };
            if (s.first + s.count > dealtMax)
                return { ...verdict, problem: `round ${rec.round}: positions ${s.first}+${s.count}, but the reveal says only ${dealtMax} cards were dealt` };
            for (let k = 0; k < s.count; k++) {
                const card = shoeCard(rec.cards?.[at + k]?.card);
                if (card !== shoe[s.first + k])
                    return { ...verdict, problem: `round ${rec.round}: the card at position ${s.first + k} is not the shoe's` };
            }
            segs.push({ first: s.first, count: s.count, round: rec.round });
            at += s.count;
        }
    }
    segs.sort((a, b) => a.first - b.first);
    let next = 0;
    for (const s of segs) {
        if (s.first < next)
            return { ...verdict, problem: `round ${s.round}: position ${s.first} dealt twice` };
        if (s.first > next)
            verdict.gaps.push([next, s.first - 1]);
        next = s.first + s.count;
        verdict.dealt += s.count;
    }
    if (reveal.dealt !== undefined && next < reveal.dealt)
        verdict.gaps.push([next, reveal.dealt - 1]);
    verdict.rounds = segs.length;
    verdict.ok = true;
    return verdict;
}

/** The shoe fields of a blackjack `Replay` (docs/replays.md, `GetReplay`): what `getReplay()`
 * answers, or any object of that shape. */
export interface ShoeReplay {
    roundId?: string | null;
    shoes?: { shoe?: number | null; commitment?: string | null; first?: number | null;
        cards?: Uint8Array | ArrayLike<number> | null }[] | null;
    shoeReveal?: { shoe?: number | null; commitment?: string | null; deck?: string | null;
        nonce?: string | null; dealt?: number | null }[] | null;
}

/** A wire card code (docs/protocol.md "Cards": rank << 2 | suit, ace 14) as text ("As"). */
function wireCardText(code: number): string {
    const rank = code >> 2;
    if (rank < 2 || rank > 14)
        throw new RangeError(`card ${code}: not a card of blackjack's deck`);
    return "23456789TJQKA"[rank - 2] + "cdhs"[code & 3];
}

/**
 * A blackjack round's replay as the record `verifyShoe` takes: the replay carries, per shoe
 * the round dealt from, its commitment, the round's first position in it and the cards dealt
 * from it in order (`Replay.shoes`), and, in the round that retired a shoe, its order and
 * nonce (`Replay.shoeReveal`). So a player checks a shoe from the replays of its rounds, which
 * `getReplay()` gives him:
 * `verifyShoe(commitment, replays.map(shoeRecordFromReplay))`. A shoe retired by a table that
 * closed between rounds is revealed in the table's shoe retirement record; the gateway adds that
 * reveal to the replays of the shoe's rounds read after it was written (docs/fairness.md "Who can
 * open it").
 */
export function shoeRecordFromReplay(replay: ShoeReplay): ShoeRecord {
    const cards: { seat: number; card: string }[] = [];
    const shoes: NonNullable<ShoeRecord["shoes"]> = [];
    for (const s of replay.shoes ?? []) {
        const got = Array.from(s.cards ?? [], (c) => wireCardText(Number(c)));
        for (const card of got)
            cards.push({ seat: -1, card });
        shoes.push({ shoe: Number(s.shoe ?? 0), commitment: String(s.commitment ?? ""),
            first: Number(s.first ?? 0), count: got.length });
    }
    const rec: ShoeRecord = { round: replay.roundId ?? undefined, cards, shoes };
    const reveal = (replay.shoeReveal ?? []).map((v) => ({
        shoe: Number(v.shoe ?? 0), commitment: String(v.commitment ?? ""),
        deck: String(v.deck ?? ""), nonce: String(v.nonce ?? ""),
        ...(v.dealt !== undefined && v.dealt !== null ? { dealt: Number(v.dealt) } : {}),
    }));
    if (reveal.length > 0)
        rec.shoe_reveal = reveal;
    return rec;
}

// ---- The per-card commitment (docs/fairness.md "The per-card commitment") -------------------
// Hold'em and Zha Jin Hua commit to each card apart (Deal.deckScheme 2), so that a player can
// check every card he saw without the deck (folded and unseen hands) being revealed:
//   leaf[i]    = SHA-256("croupier-card-v2" || i as 2 bytes BE || card code || card nonce[i])
//   commitment = SHA-256("croupier-deck-v2" || n as 2 bytes BE || leaf[0] || ... || leaf[n-1])
// After the round his replay (`getReplay()`) carries every leaf (`deckLeaves`) and an opening
// (position, card, card nonce) of each card it shows him: his own hand, the board, the hands
// shown down.

const LEAF_TAG = new TextEncoder().encode("croupier-card-v2");
const TAG_V2 = new TextEncoder().encode("croupier-deck-v2");
/** Bytes of a leaf of the per-card commitment. */
export const LEAF_BYTES = 32;

/** One card's leaf: its position in the deck, its protocol card code, its 32-byte nonce. */
export async function cardLeaf(position: number, card: number, cardNonce: Bytes | string): Promise<Uint8Array> {
    if (!Number.isInteger(position) || position < 0 || position > 0xffff)
        throw new RangeError(`position ${position}: 0..65535 expected`);
    if (!Number.isInteger(card) || card < 0 || card > 255)
        throw new RangeError(`card ${card}: a byte expected`);
    const msg = new Uint8Array(LEAF_TAG.length + 3 + NONCE_BYTES);
    msg.set(LEAF_TAG, 0);
    msg[16] = position >> 8;
    msg[17] = position & 0xff;
    msg[18] = card;
    msg.set(bytes("card nonce", cardNonce, NONCE_BYTES), 19);
    return new Uint8Array(await subtle().digest("SHA-256", msg));
}

/**
 * Every leaf of a deck under the per-card commitment (n × 32 bytes): the deck as protocol card
 * codes in dealing order and the round's nonce; card nonce i = HMAC-SHA256(nonce, "card" || i as
 * 2 bytes BE). What the record's `deck_codes` and `deck_nonce` open.
 */
export async function deckCardLeaves(codes: Bytes | string, nonce: Bytes | string): Promise<Uint8Array> {
    const c = bytes("codes", codes);
    if (c.length < 1 || c.length > MAX_DECK_CARDS)
        throw new RangeError(`codes: ${c.length} cards, 1..${MAX_DECK_CARDS} expected`);
    const key = await subtle().importKey("raw", new Uint8Array(bytes("nonce", nonce, NONCE_BYTES)),
        { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const out = new Uint8Array(c.length * LEAF_BYTES);
    for (let i = 0; i < c.length; i++) {
        const msg = Uint8Array.of(0x63, 0x61, 0x72, 0x64, i >> 8, i & 0xff); /* "card" || i */
        const cardNonce = new Uint8Array(await subtle().sign("HMAC", key, msg));
        out.set(await cardLeaf(i, c[i], cardNonce), i * LEAF_BYTES);
    }
    return out;
}

/** The per-card commitment of n leaves (n × 32 bytes, in deck order). */
export async function leavesCommitment(leaves: Bytes | string): Promise<Uint8Array> {
    const l = bytes("leaves", leaves);
    const n = l.length / LEAF_BYTES;
    if (!Number.isInteger(n) || n < 1 || n > MAX_DECK_CARDS)
        throw new RangeError(`leaves: ${l.length} bytes, 1..${MAX_DECK_CARDS} leaves of ${LEAF_BYTES} expected`);
    const msg = new Uint8Array(TAG_V2.length + 2 + l.length);
    msg.set(TAG_V2, 0);
    msg[16] = n >> 8;
    msg[17] = n & 0xff;
    msg.set(l, 18);
    return new Uint8Array(await subtle().digest("SHA-256", msg));
}

/* The shedding games' deal (docs/fairness.md "Where each card was dealt"): seats, cards a hand,
 * cards in the deck. Their hands are shown as sets (in the game's order, not as dealt), so a
 * seat's cards match its positions as a multiset. Only a match hall's duplicate deal is per card
 * (docs/fairness.md "Duplicate deals"). */
const SHED_DEALS: Record<string, { seats: number; hand: number; deck: number }> = {
    doudizhu: { seats: 3, hand: 17, deck: 54 },
    runfast: { seats: 3, hand: 16, deck: 48 },
    bigtwo: { seats: 4, hand: 13, deck: 52 },
    guandan: { seats: 4, hand: 27, deck: 108 },
};

/** Whether the game shows a seat's cards as a set (the shedding games): `dealPosition()` gives
 * the positions of its k-th card dealt, which its shown cards fill in any order. */
export function dealtAsSet(game: string): boolean {
    return Object.hasOwn(SHED_DEALS, game);
}

/**
 * The deck position of a card under the game's dealing rule (docs/fairness.md "Where each card
 * was dealt"): the k-th card (from 0) of `seat`, or of the board (`seat` -1, hold'em), in a
 * round whose button is `button` and whose seats dealt in are `seats`. Hold'em: one card at a
 * time from the button's left, twice round, then burn, flop (3), burn, turn, burn, river; Zha Jin
 * Hua: one card at a time from the button's left, three times round; the shedding games (Dou
 * Dizhu, Run Fast, Big Two, Guandan): one card at a time from seat 0 whatever the button, the k-th
 * card of seat s at k × seats + s, the table's after every hand (`dealtAsSet()`). -1: no such
 * card, or a game without the rule.
 */
export function dealPosition(game: string, button: number, seats: number[], seat: number, k: number): number {
    const shed = SHED_DEALS[game];
    if (shed !== undefined) {
        /* From seat 0, one card at a time round the seats 0 .. seats-1 (the button plays no
         * part), then the table's cards (Dou Dizhu's bottom). */
        if (seats.length !== shed.seats || seats.some((s) => s < 0 || s >= shed.seats) || k < 0)
            return -1;
        if (seat < 0)
            return k < shed.deck - shed.hand * shed.seats ? shed.hand * shed.seats + k : -1;
        return seats.includes(seat) && k < shed.hand ? k * shed.seats + seat : -1;
    }
    const holdem = game === "holdem";
    if ((!holdem && game !== "zhajinhua") || button < 0 || seats.length === 0)
        return -1;
    const perSeat = holdem ? 2 : 3;
    if (seat < 0)
        return holdem && k >= 0 && k < 5 ? perSeat * seats.length + [1, 2, 3, 5, 7][k] : -1;
    if (k < 0 || k >= perSeat || !seats.includes(seat))
        return -1;
    const key = (s: number) => (s - button - 1) & 0xffff;
    const j = seats.filter((s) => s !== seat && key(s) < key(seat)).length;
    return k * seats.length + j;
}

/** The per-card fields of a `Replay` (docs/replays.md): what `getReplay()` answers. */
export interface CardsReplay {
    game?: string | null;
    buttonSeat?: number | null;
    deckScheme?: number | null;
    deckCommitment?: Uint8Array | null;
    deckLeaves?: Uint8Array | null;
    openings?: { position?: number | null; card?: number | null; nonce?: Uint8Array | null }[] | null;
    seats?: { seat?: number | null; cards?: Uint8Array | ArrayLike<number> | null }[] | null;
    events?: { kind?: number | null; seat?: number | null; cards?: Uint8Array | ArrayLike<number> | null }[] | null;
}

/** What verifyDealCards found: `ok` only when every check passed. */
export interface CardsVerdict {
    ok: boolean;
    /** The cards checked, each the card shown and opened at its dealing position. */
    checked: { position: number; card: number; seat: number }[];
    /** Why not ok. */
    problem?: string;
}

const REPLAY_DEAL = 1; /* croupier.ReplayEventKind.REPLAY_DEAL */

/* Whether an optional field is present: a decoded protobufjs message keeps proto2 defaults on
 * its prototype (an absent seat reads 0), so presence is an own property. */
function has(o: object, key: string): boolean {
    const v = (o as Record<string, unknown>)[key];
    return Object.hasOwn(o, key) && v !== undefined && v !== null;
}

/**
 * A player's check of a round under the per-card commitment (Replay.deckScheme 2; the same
 * check as `croupier-rules verify-deal --replay`): the replay's leaves give its commitment and
 * `commitment` (the one his Deals carried, `deal.deckCommitment`, when given); every opening
 * matches its leaf; every card the replay shows him (the seats' cards, the board) is opened at
 * the position the game's dealing rule gives it, with that card; nothing else is opened. A
 * replay that is not per card, or has no button, throws; a mismatch is `ok: false` with the
 * problem.
 */
export async function verifyDealCards(replay: CardsReplay, commitment?: Bytes | string): Promise<CardsVerdict> {
    if (!has(replay, "deckScheme") || Number(replay.deckScheme) !== 2 || !has(replay, "deckLeaves") ||
        !has(replay, "deckCommitment"))
        throw new TypeError("replay: not a round under the per-card commitment (deckScheme 2)");
    const game = String(replay.game ?? "");
    const asSet = dealtAsSet(game);
    if (!has(replay, "buttonSeat") && !asSet)
        throw new TypeError("replay: no button seat, the dealing order is unknown");
    const button = has(replay, "buttonSeat") ? Number(replay.buttonSeat) : -1;
    const seats = (replay.seats ?? []).map((s) => Number(s.seat ?? 0));
    if (dealPosition(game, button, seats, seats[0] ?? 0, 0) < 0)
        throw new TypeError(`replay: no dealing rule known for '${game}'`);
    const verdict: CardsVerdict = { ok: false, checked: [] };
    const leaves = bytes("deckLeaves", replay.deckLeaves!);
    const root = await leavesCommitment(leaves);
    if (!sameBytes(root, bytes("deckCommitment", replay.deckCommitment!, COMMITMENT_BYTES)))
        return { ...verdict, problem: "the leaves do not give the replay's commitment" };
    if (commitment !== undefined && !sameBytes(root, bytes("commitment", commitment, COMMITMENT_BYTES)))
        return { ...verdict, problem: "the leaves give the replay's commitment, not the one the Deals carried" };
    const n = leaves.length / LEAF_BYTES;
    const opened = new Map<number, number>();
    for (const o of replay.openings ?? []) {
        const pos = Number(o.position ?? -1), card = Number(o.card ?? -1);
        if (!Number.isInteger(pos) || pos < 0 || pos >= n || opened.has(pos) || card < 0 || card > 255)
            return { ...verdict, problem: `opening at position ${pos}: no position, or opened twice` };
        const leaf = await cardLeaf(pos, card, o.nonce ?? new Uint8Array(0));
        if (!sameBytes(leaf, leaves.subarray(pos * LEAF_BYTES, (pos + 1) * LEAF_BYTES)))
            return { ...verdict, problem: `position ${pos}: card ${card} with its nonce does not give its leaf` };
        opened.set(pos, card);
    }
    const used = new Set<number>();
    /* A shedding game's hand is a set: the first of the seat's positions opened with that card
     * and not taken by another shown card. */
    const setPosition = (seat: number, card: number): number => {
        for (let j = 0; ; j++) {
            const p = dealPosition(game, button, seats, seat, j);
            if (p < 0)
                return -1;
            if (!used.has(p) && opened.get(p) === card) {
                used.add(p);
                return p;
            }
        }
    };
    const expect = (seat: number, k: number, card: number): string | undefined => {
        const pos = asSet ? setPosition(seat, card) : dealPosition(game, button, seats, seat, k);
        if (pos < 0 || opened.get(pos) !== card)
            return `${seat < 0 ? "board" : `seat ${seat}'s`} card ${k} (code ${card}) is not opened at position ${pos}`;
        verdict.checked.push({ position: pos, card, seat });
        return undefined;
    };
    for (const s of replay.seats ?? []) {
        const cards = Array.from(s.cards ?? [], Number);
        for (let k = 0; k < cards.length; k++) {
            const problem = expect(Number(s.seat ?? 0), k, cards[k]);
            if (problem !== undefined)
                return { ...verdict, problem };
        }
    }
    let b = 0;
    for (const e of replay.events ?? []) {
        if (Number(e.kind ?? 0) !== REPLAY_DEAL || has(e, "seat"))
            continue;
        for (const card of Array.from(e.cards ?? [], Number)) {
            const problem = expect(-1, b++, card);
            if (problem !== undefined)
                return { ...verdict, problem };
        }
    }
    if (verdict.checked.length !== opened.size)
        return { ...verdict, problem: `${opened.size} openings, ${verdict.checked.length} cards shown: a card is opened that the replay does not show` };
    verdict.ok = true;
    return verdict;
}
