// The layout check the browser tests share (README "The test"): what is wrong with the page as
// drawn now.
import type { Page } from "puppeteer-core";

/* What is wrong with the page as drawn now (docs: clients/web/README.md "The test"): an element
 * outside the viewport horizontally, a seat, button or heading over another, a card that is no
 * SVG, a raw desk id (a number of 2^32 or more) in its text. */
export async function layoutProblems(page: Page): Promise<string[]> {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    return page.evaluate(() => {
        const out: string[] = [];
        const W = document.documentElement.clientWidth;
        const shown = (e: Element) => {
            const r = e.getBoundingClientRect();
            return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden";
        };
        const name = (e: Element) => (e.id ? `#${e.id}` : `${e.tagName.toLowerCase()}.${[...e.classList].join(".")}`) +
            ` "${(e.textContent ?? "").trim().slice(0, 30)}"`;
        if (document.documentElement.scrollWidth > W + 1)
            out.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${W} px viewport`);
        for (const e of document.querySelectorAll("body *")) {
            if (e.closest("svg.card") !== null && !e.matches("svg.card"))
                continue; /* the parts of a card: the card itself is checked */
            if (!shown(e))
                continue;
            const r = e.getBoundingClientRect();
            if (r.left < -1 || r.right > W + 1)
                out.push(`${name(e)} is outside the viewport (${Math.round(r.left)}..${Math.round(r.right)} of ${W})`);
        }
        const boxes = [...document.querySelectorAll(
            "#table-title, #timer, #leave, .seat, #actions button, #actions input, #wallet, #status, " +
            "#lobby-tabs button, #tour-refresh, #tour-back, #tour-actions button, .tour-facts .fact, .tour-row td, " +
            "#unwatch, .watch-table button, #watch-follow, #replay-open, .round-replay button, #replay-title, " +
            "#replay-close, #replay-controls button, .replay-seat")].filter(shown);
        for (let i = 0; i < boxes.length; i++)
            for (let j = i + 1; j < boxes.length; j++) {
                const a = boxes[i].getBoundingClientRect(), b = boxes[j].getBoundingClientRect();
                const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
                const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
                if (w > 1 && h > 1)
                    out.push(`${name(boxes[i])} overlaps ${name(boxes[j])}`);
            }
        for (const c of document.querySelectorAll(".card"))
            if (c.tagName.toLowerCase() !== "svg")
                out.push(`a card is not drawn as an SVG: ${name(c)}`);
        for (const m of document.body.innerText.matchAll(/\d{10,}/g))
            if (BigInt(m[0]) >= 2n ** 32n)
                out.push(`a raw id is shown: ${m[0]}`);
        return out;
    });
}
