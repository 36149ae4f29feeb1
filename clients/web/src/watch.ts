// Watch mode (docs/spectators.md): from the lobby's "Watch & replay" tab the person watches a
// listed table (its server and desk) or follows a player through his tables, through the SDK's
// watch() (clients/ts: the Watch is sent again after every reconnect). The table is drawn as a
// player's table is (src/table.ts from the spectator's Snapshot, then the public events), with no
// seat of the person's and no action; a banner says what is watched, with an Unwatch button,
// and why the watch ended when it did (WatchEnded). Each spectator Snapshot of another desk is a
// new table (a followed player moved, or his table moved at a drain). The texts are pure and
// exported for test/units.test.ts.
import { Client, CroupierError, croupier } from "@croupier/client";
import type { WatchTarget } from "@croupier/client";

import { num, Table } from "./table.js";

const C = croupier.ErrorCode;

/** WatchEnded (docs/spectators.md "The requests") in plain words. */
export function watchEndedText(code: croupier.ErrorCode | null | undefined, detail = ""): string {
    const why = (() => {
        switch (code) {
        case C.NO_SUCH_TABLE:
            return "the table is gone: it closed, or moved to another server (follow a player to follow his table)";
        case C.NOT_SEATED:
            return "the player followed has sat at no table for a minute";
        case C.NOT_WATCHABLE:
            return "the table may not be watched any more (a match's duplicate deal, or spectators forbidden)";
        case C.WATCH_FULL:
            return "the table has as many spectators as it allows";
        case C.UNAVAILABLE:
            return "the table could not be watched again after the reconnect";
        default:
            return `the gateway ended it (${C[code ?? 0] ?? code})`;
        }
    })();
    return `The watch ended: ${why}` + (detail !== "" ? ` (${detail})` : "") + ".";
}

/** A refused Watch in plain words; who: "that table" or "player 91001". */
export function watchRefusalText(e: unknown, who: string): string {
    if (!(e instanceof CroupierError))
        return `Watching ${who} failed: ${e instanceof Error ? e.message : String(e)}`;
    switch (e.codeName) {
    case "NO_SUCH_TABLE":
        return `Cannot watch ${who}: it is gone (closed, or moved to another server); refresh the list`;
    case "NOT_SEATED":
        return `Cannot watch ${who}: he sits at no table now`;
    case "NOT_WATCHABLE":
        return `Cannot watch ${who}: its table may not be watched` + (e.message ? ` (${e.message})` : "");
    case "WATCH_FULL":
        return `Cannot watch ${who}: the table has as many spectators as it allows; try again later`;
    case "ALREADY_SEATED":
        return "You hold a seat at a table: leave it before watching one";
    case "UNAVAILABLE":
        return `Cannot watch ${who} just now (its server did not answer); try again`;
    default:
        return `Cannot watch ${who} (${e.codeName})` + (e.message ? `: ${e.message}` : "");
    }
}

/** A player id as typed: a whole number above 0; else null. */
export function playerIdOf(text: string): number | null {
    const t = text.trim();
    const n = Number(t);
    return /^[0-9]+$/.test(t) && Number.isSafeInteger(n) && n > 0 ? n : null;
}

export interface WatchDeps {
    client: () => Client | null;
    el: (tag: string, cls?: string, text?: string) => HTMLElement;
    note: (kind: string, text: string) => HTMLElement;
    showError: (text: string) => void;
    gameLabel: (game: string) => string;
    /** The table view shows t (a spectator's Table), drawn at once. */
    enter: (t: Table) => void;
    /** The table view is redrawn (the banner with it). */
    render: () => void;
    /** Back to the lobby (the table view put away). */
    lobby: () => void;
}

const $ = (id: string) => document.getElementById(id) as HTMLElement;
const fmt = (n: number): string => n.toLocaleString("en-US");

export class WatchMode {
    private target: WatchTarget | null = null;
    private what = "";             /* "player 91001", "a Texas Hold'em table" */
    private desk = "";             /* the watched desk (a bigint's digits) */
    private ended: string | null = null;
    private busy = false;
    private resumed = false;       /* reconnected: the next Snapshot is the SDK's Watch sent again */

    constructor(private d: WatchDeps) {
        $("watch-refresh").onclick = () => void this.list();
        $("watch-follow").onclick = () => void this.follow(($("watch-player") as HTMLInputElement).value);
        $("watch-player").onkeydown = (e) => {
            if (e.key === "Enter")
                void this.follow(($("watch-player") as HTMLInputElement).value);
        };
        $("unwatch").onclick = () => void this.unwatch();
    }

    /** Whether the table view is a spectator's (until Unwatch, or Back after its end). */
    active(): boolean {
        return this.target !== null;
    }

    /** The tables open in the lobby (ListTables: those with a free seat), each to watch. */
    async list(): Promise<void> {
        const c = this.d.client();
        if (c === null)
            return;
        const box = $("watch-tables");
        try {
            const ads = await c.listTables();
            box.replaceChildren(...ads.map((ad) => {
                const li = this.d.el("li", "watch-table");
                li.dataset.game = ad.game ?? "";
                li.dataset.desk = String(ad.deskId);
                const taken = (ad.seats ?? 0) - (ad.seatsFree ?? 0);
                li.append(this.d.el("span", "", `${this.d.gameLabel(ad.game ?? "")} · stake ${fmt(num(ad.stake))} · ` +
                    `${taken} of ${ad.seats ?? 0} seats taken`));
                const b = this.d.el("button", "", "Watch") as HTMLButtonElement;
                b.type = "button";
                b.onclick = () => void this.start({ serverId: ad.serverId ?? "", deskId: ad.deskId! },
                    `a ${this.d.gameLabel(ad.game ?? "")} table`);
                li.append(b);
                return li;
            }));
            $("watch-empty").hidden = ads.length > 0;
        } catch (e) {
            box.replaceChildren();
            $("watch-empty").hidden = false;
            this.d.showError(`The tables could not be listed: ${e instanceof Error ? e.message : String(e)}`);
        }
    }

    /** Follows a player by the id typed (checked here: nothing is sent for bad input). */
    async follow(text: string): Promise<void> {
        const id = playerIdOf(text);
        if (id === null) {
            this.d.showError(`A player id is a whole number above 0 (not "${text.trim()}")`);
            return;
        }
        if (id === this.d.client()?.playerId) {
            this.d.showError("You cannot watch yourself: give another player's id");
            return;
        }
        await this.start({ playerId: id }, `player ${id}`);
    }

    private async start(target: WatchTarget, what: string): Promise<void> {
        const c = this.d.client();
        if (c === null || this.busy)
            return;
        $("error").hidden = true;
        this.busy = true;
        try {
            const s = await c.watch(target);
            this.target = target;
            this.what = what;
            this.ended = null;
            this.desk = String(s.deskId);
            this.d.note("watch", `Watching ${what}: ${this.d.gameLabel(s.game ?? "")}`);
            this.d.enter(Table.fromSnapshot(s));
        } catch (e) {
            this.d.showError(watchRefusalText(e, what));
        } finally {
            this.busy = false;
        }
    }

    /** The connection was resumed on another gateway: the SDK sends the Watch again. */
    onReconnected(): void {
        this.resumed = this.target !== null;
    }

    /** A spectator Snapshot pushed ("watchSnapshot"): the watched table again, after a
     * reconnect; else the next table of the player followed (docs/spectators.md "Following a
     * player": every such Snapshot is a new table, even of the same desk id: a table moved
     * whole to another server may get the id it had). */
    onSnapshot(s: croupier.ISnapshot, current: Table | null): void {
        if (this.target === null)
            return;
        const desk = String(s.deskId);
        const again = this.resumed;
        this.resumed = false;
        this.ended = null;
        if (again && current !== null && current.spectator && desk === this.desk) {
            current.applySnapshot(s);
            this.d.render();
            return;
        }
        this.desk = desk;
        const n = this.d.note("watch", `Now watching ${this.what} at another table: ${this.d.gameLabel(s.game ?? "")}` +
            (this.target.playerId !== undefined ? " (he moved, or his table moved to another server)" : ""));
        n.dataset.kind = "new-table";
        this.d.enter(Table.fromSnapshot(s));
    }

    /** WatchEnded: the reason in words; the last table stays drawn until "Back to the lobby". */
    onEnded(w: croupier.IWatchEnded): void {
        if (this.target === null)
            return;
        this.ended = watchEndedText(w.code, w.detail ?? "");
        this.d.note("closing", this.ended).dataset.kind = "watch-ended";
        this.d.render();
    }

    /** Unwatch (also "Back to the lobby" once the watch ended): the lobby again. */
    async unwatch(): Promise<void> {
        const c = this.d.client();
        const was = this.ended === null;
        this.target = null;
        this.ended = null;
        this.desk = "";
        if (c !== null && was)
            await c.unwatch().catch(() => {}); /* OK also when nothing is watched */
        this.d.note("info", "You stopped watching");
        this.d.lobby();
    }

    /** The banner above the spectator's table: what is watched, or why the watch ended. */
    banner(): void {
        const b = $("watch-banner");
        b.hidden = this.target === null;
        if (this.target === null)
            return;
        b.dataset.state = this.ended === null ? "watching" : "ended";
        $("watch-text").textContent = this.ended ?? `Watching ${this.what} · you are a spectator: no seat, no move`;
        $("unwatch").textContent = this.ended === null ? "Unwatch" : "Back to the lobby";
    }
}
