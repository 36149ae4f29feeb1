// Cards as the page draws them. The codes (docs/protocol.md "Cards") are decoded by the SDK
// (decodeCard / decodeCards of @croupier/client: rank 2..14, 15 a joker, the suit, the text);
// here they become SVG card faces drawn in code: corner indices, the pips of the number cards,
// a framed letter for the court cards, the jokers (the Big Joker, 大王, red; the Little Joker,
// 小王, black) and a back for face-down cards. Nothing is fetched: every card is an inline <svg>.
import { decodeCard, type Card } from "@croupier/client";

const SVG = "http://www.w3.org/2000/svg";
const SUIT_SIGN: Record<string, string> = { clubs: "♣", diamonds: "♦", hearts: "♥", spades: "♠" };
const RANK_TEXT: Record<number, string> = { 11: "J", 12: "Q", 13: "K", 14: "A" };

/** A decoded card, or null when the code is no card of the protocol. */
export function decode(code: number): Card | null {
    try {
        return decodeCard(code);
    } catch {
        return null;
    }
}

/** The name a person reads: "10♥", "A♠", "Big Joker", "Little Joker". */
export function cardName(code: number): string {
    const c = decode(code);
    if (c === null)
        return `card ${code}`;
    if (c.joker !== null)
        return c.joker === "red" ? "Big Joker" : "Little Joker";
    return c.text;
}

/** Cards as text, for the moves written in the log: "3♠ 3♥", "Big Joker". */
export function cardsText(codes: number[]): string {
    return codes.map(cardName).join(" ");
}

/** Whether the card is drawn red: diamonds, hearts and the big (red) joker. */
export function cardRed(code: number): boolean {
    const c = decode(code);
    return c !== null && (c.joker === "red" || c.suit === "diamonds" || c.suit === "hearts");
}

/** The shedding games' order (docs/rules/doudizhu.md "Cards and deal"): 3 low ... A, 2, little
 * joker, big joker; suits break ties so a sorted hand is stable. */
export function sheddingOrder(code: number): number {
    const c = decode(code);
    if (c === null)
        return -1;
    const suit = code & 3;
    const v = c.joker !== null ? 16 + suit : c.rank === 2 ? 15 : c.rank;
    return v * 4 + suit;
}

/** Guandan's order (docs/rules/guandan.md "Players, cards, deal"): 2 low ... A, then the level
 * rank (its hearts, the wild cards, last among them), the little jokers, the big jokers. */
export function guandanOrder(code: number, level: number): number {
    const c = decode(code);
    if (c === null)
        return -1;
    const suit = code & 3;
    const v = c.joker !== null ? 16 + suit : c.rank === level ? 15 : c.rank;
    return v * 4 + (c.rank === level && suit === 2 ? 3.5 : suit);
}

/** The wild cards of a Guandan deal: the two hearts of its level rank. */
export function guandanWild(code: number, level: number): boolean {
    return code >> 2 === level && (code & 3) === 2 && level >= 2 && level <= 14;
}

/** Blackjack's value of a hand (docs/rules/blackjack.md §1): the best total and whether an ace
 * still counts 11 (soft). */
export function blackjackTotal(cards: number[]): { total: number; soft: boolean } {
    let total = 0, aces = 0;
    for (const code of cards) {
        const r = code >> 2;
        if (r === 14) {
            aces++;
            total += 1;
        } else {
            total += r >= 10 ? 10 : r;
        }
    }
    const soft = aces > 0 && total + 10 <= 21;
    return { total: soft ? total + 10 : total, soft };
}

/** Blackjack's value of one card for a split (a king and a ten are a pair). */
export function blackjackValue(code: number): number {
    const r = code >> 2;
    return r === 14 ? 11 : r >= 10 ? 10 : r;
}

/* ---- drawing ------------------------------------------------------------------------------ */

/* The card's box: 60 x 84 (5:7), the corner indices in the top-left and, turned, bottom-right. */
const W = 60, H = 84;

function svgEl(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs))
        e.setAttribute(k, String(v));
    if (text !== undefined)
        e.textContent = text;
    return e;
}

/* The pips of the number cards, on a 3-column grid: x in {17, 30, 43}, y from 16 to 68; a pip
 * below the middle is drawn upside down, as printed cards have them. */
const PIPS: Record<number, [number, number][]> = {
    2: [[30, 18], [30, 66]],
    3: [[30, 18], [30, 42], [30, 66]],
    4: [[19, 18], [41, 18], [19, 66], [41, 66]],
    5: [[19, 18], [41, 18], [30, 42], [19, 66], [41, 66]],
    6: [[19, 18], [41, 18], [19, 42], [41, 42], [19, 66], [41, 66]],
    7: [[19, 18], [41, 18], [30, 30], [19, 42], [41, 42], [19, 66], [41, 66]],
    8: [[19, 18], [41, 18], [30, 30], [19, 42], [41, 42], [30, 54], [19, 66], [41, 66]],
    9: [[19, 18], [41, 18], [19, 34], [41, 34], [30, 42], [19, 50], [41, 50], [19, 66], [41, 66]],
    10: [[19, 18], [41, 18], [30, 27], [19, 36], [41, 36], [19, 48], [41, 48], [30, 57], [19, 66], [41, 66]],
};

function corner(svg: SVGElement, rank: string, suit: string, color: string): void {
    for (const turned of [false, true]) {
        const g = svgEl("g", turned ? { transform: `rotate(180 ${W / 2} ${H / 2})` } : {});
        g.append(svgEl("text", { x: 7, y: 14, "font-size": rank.length > 1 ? 11 : 13, "font-weight": 700,
            "text-anchor": "middle", fill: color, "font-family": "Georgia, 'Times New Roman', serif" }, rank));
        g.append(svgEl("text", { x: 7, y: 24, "font-size": 10, "text-anchor": "middle", fill: color }, suit));
        svg.append(g);
    }
}

function face(svg: SVGElement, c: Card): void {
    const color = c.joker === "red" || c.suit === "diamonds" || c.suit === "hearts" ? "#c1121f" : "#111";
    svg.append(svgEl("rect", { x: 0.75, y: 0.75, width: W - 1.5, height: H - 1.5, rx: 5,
        fill: "#fffdf8", stroke: "#8a8a8a", "stroke-width": 1.5 }));
    if (c.joker !== null) {
        /* The jokers: "JOKER" down the corners, a star (filled on the big one) and its name. */
        for (const turned of [false, true]) {
            const g = svgEl("g", turned ? { transform: `rotate(180 ${W / 2} ${H / 2})` } : {});
            "JOKER".split("").forEach((ch, i) =>
                g.append(svgEl("text", { x: 7, y: 11 + i * 8, "font-size": 8, "font-weight": 700,
                    "text-anchor": "middle", fill: color, "font-family": "sans-serif" }, ch)));
            svg.append(g);
        }
        svg.append(svgEl("path", { d: "M30 16 l5.3 10.8 11.9 1.7 -8.6 8.4 2 11.8 -10.6 -5.6 -10.6 5.6 2 -11.8 -8.6 -8.4 11.9 -1.7z",
            fill: c.joker === "red" ? color : "none", stroke: color, "stroke-width": 1.6 }));
        /* English words, not 大王 / 小王: a machine without CJK fonts would draw empty boxes */
        svg.append(svgEl("text", { x: 31, y: 62, "font-size": c.joker === "red" ? 11 : 9, "font-weight": 700,
            "text-anchor": "middle", fill: color, "font-family": "sans-serif" }, c.joker === "red" ? "BIG" : "LITTLE"));
        svg.append(svgEl("text", { x: 31, y: 72, "font-size": 8, "font-weight": 700, "text-anchor": "middle",
            fill: color, "font-family": "sans-serif" }, "JOKER"));
        return;
    }
    const sign = SUIT_SIGN[c.suit ?? "spades"];
    const rank = RANK_TEXT[c.rank] ?? String(c.rank);
    corner(svg, rank, sign, color);
    const pips = PIPS[c.rank];
    if (pips !== undefined) {
        for (const [x, y] of pips)
            svg.append(svgEl("text", { x, y: y + 5, "font-size": 14, "text-anchor": "middle", fill: color,
                ...(y > 42 ? { transform: `rotate(180 ${x} ${y})` } : {}) }, sign));
    } else if (c.rank === 14) {
        svg.append(svgEl("text", { x: 30, y: 52, "font-size": 34, "text-anchor": "middle", fill: color }, sign));
    } else {
        /* a court card: its letter in a frame, the suit above and below */
        svg.append(svgEl("rect", { x: 15, y: 14, width: 30, height: 56, rx: 3, fill: "none", stroke: color,
            "stroke-width": 1.2 }));
        svg.append(svgEl("text", { x: 30, y: 50, "font-size": 26, "font-weight": 700, "text-anchor": "middle",
            fill: color, "font-family": "Georgia, 'Times New Roman', serif" }, rank));
        svg.append(svgEl("text", { x: 30, y: 27, "font-size": 11, "text-anchor": "middle", fill: color }, sign));
        svg.append(svgEl("text", { x: 30, y: 66, "font-size": 11, "text-anchor": "middle", fill: color,
            transform: "rotate(180 30 62)" }, sign));
    }
}

function back(svg: SVGElement): void {
    svg.append(svgEl("rect", { x: 0.75, y: 0.75, width: W - 1.5, height: H - 1.5, rx: 5, fill: "#fffdf8",
        stroke: "#8a8a8a", "stroke-width": 1.5 }));
    svg.append(svgEl("rect", { x: 4, y: 4, width: W - 8, height: H - 8, rx: 3, fill: "#23498f" }));
    /* a lattice of small diamonds, every other row shifted by half a step */
    for (let row = 0, y = 10; y <= H - 10; row++, y += 6)
        for (let x = row % 2 === 0 ? 10 : 14; x <= W - 10; x += 8)
            svg.append(svgEl("path", { d: `M${x} ${y - 3}l3 3-3 3-3-3z`, fill: "#5f86cf" }));
    svg.append(svgEl("rect", { x: 4, y: 4, width: W - 8, height: H - 8, rx: 3, fill: "none", stroke: "#e2b13c",
        "stroke-width": 1.2 }));
}

/** One card as an inline SVG element (class "card"); null draws the back of a face-down card.
 * Its name ("10♥", "Big Joker", "face-down card") is its title and accessible label. */
export function cardElement(code: number | null): SVGSVGElement {
    const svg = document.createElementNS(SVG, "svg") as SVGSVGElement;
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("role", "img");
    svg.classList.add("card");
    const c = code === null ? null : decode(code);
    const name = code === null ? "face-down card" : cardName(code);
    svg.setAttribute("aria-label", name);
    svg.append(svgEl("title", {}, name));
    if (c === null) {
        svg.classList.add("back");
        back(svg);
    } else {
        svg.dataset.code = String(code);
        if (cardRed(c.code))
            svg.classList.add("red");
        if (c.joker !== null)
            svg.classList.add("joker", c.joker === "red" ? "big-joker" : "little-joker");
        face(svg, c);
    }
    return svg;
}
