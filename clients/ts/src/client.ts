// The croupier client: one player's session with croupier-gate over WebSocket
// (docs/protocol.md "Transports"; one binary message = one ClientMessage / ServerMessage).
//
// The lossless part lives here (docs/gateway.md "GoAway and reconnects"): on GoAway{SHUTDOWN}
// (or a lost connection) the client waits the gateway's jittered reconnect delay, connects to
// another gateway of its list, logs in again, resumes the seat, and sends the requests that
// were waiting for an answer again with the same request id (the gateway and the game server
// answer a repeat from memory, so nothing is applied twice). Request ids come from one counter
// per client and survive reconnects. The application sees one "reconnected" event and a
// "snapshot", never a dropped game.
//
// A gateway can also stop answering without closing anything (frozen, cut off: its kernel may
// still accept what the client writes). The keepalive notices (docs/protocol.md "Keepalive"):
// nothing received for keepaliveIdleMs, a Ping; nothing at all keepaliveTimeoutMs after it, the
// connection is dropped as lost ("gatewaySilent") and the reconnect above moves to the next
// gateway.
import { croupier } from "../gen/client.js";

export { croupier };
export type ServerMessage = croupier.ServerMessage;

/** A request the gateway refused: the protocol's ErrorCode, its name, and whether a retry may
 * succeed. */
export class CroupierError extends Error {
    readonly code: number;
    readonly codeName: string;
    readonly retriable: boolean;
    constructor(code: number, message: string, retriable: boolean) {
        const name = croupier.ErrorCode[code] ?? `ERROR_${code}`;
        super(`${name}: ${message}`);
        this.code = code;
        this.codeName = name;
        this.retriable = retriable;
    }
}

/** What a WebSocket constructor must offer: the browser's, or the `ws` package in Node. */
export interface WebSocketLike {
    binaryType: string;
    readyState: number;
    send(data: Uint8Array): void;
    close(code?: number, reason?: string): void;
    onopen: ((ev: unknown) => void) | null;
    onmessage: ((ev: { data: unknown }) => void) | null;
    onclose: ((ev: { code: number; reason: string }) => void) | null;
    onerror: ((ev: unknown) => void) | null;
}
export type WebSocketCtor = new (url: string) => WebSocketLike;

export interface ClientOptions {
    /** Gateway WebSocket URLs (ws:// or wss://); the client starts with the first and moves to
     * the next one on every reconnect. */
    urls: string[];
    /** The login token, or a function returning a fresh one (called at every login). */
    token: string | (() => string | Promise<string>);
    /** The WebSocket constructor; default: globalThis.WebSocket, else the `ws` package. */
    WebSocket?: WebSocketCtor;
    /** How long a request may take in all, retries and reconnects included (ms; 10000). */
    requestBudgetMs?: number;
    /** Waiting for a connection and its login (ms; 5000). */
    connectTimeoutMs?: number;
    /** Upper bound of the backoff between failed reconnects (ms; 5000). */
    maxBackoffMs?: number;
    /** Keepalive: a Ping after this long without receiving anything from the gateway (ms;
     * 3000; 0 turns the keepalive off). */
    keepaliveIdleMs?: number;
    /** Keepalive: nothing received this long after that Ping, the gateway is taken for dead:
     * "gatewaySilent", then the reconnect to another gateway (ms; 5000). */
    keepaliveTimeoutMs?: number;
}

type EventMap = {
    deal: croupier.IDeal;
    turn: croupier.ITurn;
    play: croupier.IPlay;
    roundEnd: croupier.IRoundEnd;
    snapshot: croupier.ISnapshot;
    moved: croupier.IMoved;
    tableClosing: croupier.ITableClosing;
    /** A private room's scoreboard: after each deal and at its end (docs/protocol.md). */
    room: croupier.IRoomInfo;
    /** A tournament's event (docs/protocol.md "Tournaments"): pushed for the tournaments this
     * client registered in or asked about (getTournament), and MOVED_TABLE / ELIMINATED for
     * the player they name. Not replayed after a reconnect: "tournamentInfo" brings the state. */
    tournamentEvent: croupier.ITournamentEvent;
    /** A followed tournament's state, asked again after a reconnect (the new gateway pushes its
     * events from then on; what happened meanwhile is in it). */
    tournamentInfo: croupier.ITournamentInfo;
    /** playTournament's progress at the player's tournament table (TournamentSeatEvent). */
    tournamentSeat: TournamentSeatEvent;
    /** A table-kit game's own event (ENGINE_GAME, docs/protocol.md "Games on the table kit"):
     * its `body` is the game's message, serialized (e.g. games/zhajinhua/zhajinhua.proto's
     * ZjhEvent), not opened here. */
    gameEvent: croupier.IGameEvent;
    goAway: croupier.IGoAway;
    /** A watched table's public Snapshot (docs/spectators.md; `spectator` is true): the answer
     * to `watch()`, each next table of a followed player, and the table again after a
     * reconnect. While watching, "deal", "turn", "play", "roundEnd" and "gameEvent" carry that
     * table's public events. */
    watchSnapshot: croupier.ISnapshot;
    /** The watch ended without `unwatch()`: the table closed or moved away (NO_SUCH_TABLE), the
     * player followed sits nowhere (NOT_SEATED), or the watch was refused again after a
     * reconnect. */
    watchEnded: croupier.IWatchEnded;
    reconnected: { url: string; snapshot: croupier.ISnapshot | null };
    disconnected: { code: number; reason: string };
    /** The gateway sent nothing, not even the Pong of a keepalive Ping, for silentMs: the
     * connection is dropped and the client moves to another gateway ("disconnected", then
     * "reconnected"). */
    gatewaySilent: { url: string; silentMs: number };
    closed: { reason: string };
};
export type ClientEvent = keyof EventMap;

type Pending = {
    id: number;
    msg: croupier.IClientMessage;
    deadline: number;
    resolve: (m: croupier.ServerMessage) => void;
    reject: (e: Error) => void;
    timer?: ReturnType<typeof setTimeout>;
    sentGen: number; /* the connection it was last sent on */
};

/** What `watch()` watches: a table of `listTables()` (its `serverId` and `deskId`), or the
 * table where a player sits, followed through his moves (docs/spectators.md). */
export type WatchTarget =
    | { serverId: string; deskId: NonNullable<croupier.IWatch["deskId"]>; playerId?: undefined }
    | { playerId: NonNullable<croupier.IWatch["playerId"]>; serverId?: undefined;
        deskId?: undefined };

/** What `join()` resolves to: the `Joined` of a new seat, or, when the game server finds the
 * player already seated there (a repeated Join), that seat's `Snapshot`. Exactly one is set. */
export type JoinResult =
    | { joined: croupier.IJoined; snapshot?: undefined }
    | { joined?: undefined; snapshot: croupier.ISnapshot };

/** What `listTournaments()` resolves to: newest first, and how many the gateway knows (before
 * the filter and the limit). */
export interface TournamentListResult {
    tournaments: croupier.ITournamentSummary[];
    total: number;
}

/** The gateway follows at most this many tournaments per connection (the most recent): the ones
 * asked again after a reconnect (docs/protocol.md "Tournaments", "Pushes"). */
export const TOURNAMENTS_FOLLOWED = 8;

/** What `playTournament()` tells as it follows the player's seat ("tournamentSeat"), in order:
 * - `waiting`: TakeTournamentSeat answered NOT_SEATED (retriable: before the start, waiting for
 *   a table, a table not dealt yet or being taken over); asked again every 300-500 ms. Emitted
 *   once per wait, `detail` the gateway's words.
 * - `seated`: the Snapshot of the player's table (`deskId`); Deal, Turn, Play and RoundEnd of
 *   that table follow as at any table, and `act()` plays there.
 * - `left`: TableClosing{CLOSING_TOURNAMENT} for that table (`detail`: moved, busted, table
 *   broken, its server gone); the next seat is asked for at once (`waiting`, `seated` follow,
 *   or `finished`).
 * - `out` (a match hall, docs/protocol.md "Match halls"): the player is out of the match; his
 *   place comes with its end (`finished` follows then). No seat is asked for meanwhile.
 * - `finished`: the tournament is over for the player (the last event): `place` and `prize`
 *   when known (from his ELIMINATED or FINISHED push, else his entry), `item` his place's item
 *   prize when it has one (a string the studio defines, docs/tournaments.md "Items"), `won` for
 *   the winner,
 *   `reason` ELIMINATED, FINISHED, TOURNAMENT_OVER, NOT_REGISTERED or CANCELLED.
 * - `stopped`: the helper gave up (the last event): `error` says why (the timeout or the
 *   AbortSignal before a seat, `stopTournament()`, the client closed, a refusal such as
 *   NO_SUCH_TOURNAMENT or ALREADY_SEATED). Nothing is sent to the table: the seat is kept and
 *   played by the automatic move (docs/protocol.md "Tournaments"). */
export type TournamentSeatEvent =
    | { tournament: number; kind: "waiting"; detail: string }
    | { tournament: number; kind: "seated"; deskId: bigint; snapshot: croupier.ISnapshot }
    | { tournament: number; kind: "left"; deskId: bigint; detail: string }
    | { tournament: number; kind: "out"; detail: string }
    | { tournament: number; kind: "finished"; place: number; prize: number; item?: string;
        won: boolean; reason: "ELIMINATED" | "FINISHED" | "TOURNAMENT_OVER" | "NOT_REGISTERED" | "CANCELLED" }
    | { tournament: number; kind: "stopped"; error: Error };

export interface PlayTournamentOptions {
    /** Gives up waiting for the first seat after this long (ms; default: no bound). */
    timeoutMs?: number;
    /** Aborted: stops waiting and following ("stopped"); a first seat not yet had rejects. */
    signal?: AbortSignal;
}

/* A tournament seat followed by playTournament: its state between the asks. */
type TourFollow = {
    id: number;
    deskId: bigint;             /* the table last seated at (0n: none) */
    running: boolean;           /* an ask loop is on */
    again: boolean;             /* asked to ask again once the loop ends */
    done: boolean;
    out: boolean;               /* out of a match: waits for its place, asks no seat */
    waited: boolean;            /* "waiting" emitted in this wait */
    deadline: number;           /* for the first seat (Infinity: none) */
    first: { resolve: (s: croupier.ISnapshot) => void; reject: (e: Error) => void } | null;
    wake: (() => void) | null;  /* ends a wait between asks at once */
    unabort: (() => void) | null;
};

const TOUR_RETRY_MS = 300;        /* NOT_SEATED: asked again after 300 ms ... */
const TOUR_RETRY_JITTER_MS = 200; /* ... plus up to 200 */
const TOUR_PLACE_WAIT_MS = 10000; /* busted in a hand-for-hand round: the place comes at its end */

/* The amounts the gateway refuses with BAD_REQUEST and closes the connection for (docs/protocol.md
 * "Actions" and "Message rules"): checked before sending, so the request is refused at once and
 * the connection kept. Also refuses what would not encode exactly (a fraction, beyond 2^53). */
function checkRequest(body: Omit<croupier.IClientMessage, "requestId">): string | null {
    const positive = (path: string, v: unknown, what: string): string | null =>
        typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0
            ? `ClientMessage.${path}: ${what} (got ${String(v)})` : null;
    if (body.join)
        return positive("join.stake", body.join.stake, "an integer > 0");
    if (body.createRoom)
        return positive("create_room.stake", body.createRoom.stake, "an integer > 0");
    if (body.listTables && body.listTables.stake !== undefined && body.listTables.stake !== null)
        return positive("list_tables.stake", body.listTables.stake, "an integer > 0");
    const tour = body.getTournament ?? body.registerTournament ?? body.unregisterTournament ??
        body.takeTournamentSeat;
    if (tour) {
        const name = body.getTournament ? "get_tournament" : body.registerTournament ? "register_tournament"
            : body.unregisterTournament ? "unregister_tournament" : "take_tournament_seat";
        return positive(`${name}.tournament`, tour.tournament, "a tournament id, an integer > 0");
    }
    const lt = body.listTournaments;
    if (lt && lt.limit !== undefined && lt.limit !== null &&
        (typeof lt.limit !== "number" || !Number.isInteger(lt.limit) || lt.limit < 1 || lt.limit > 200))
        return `ClientMessage.list_tournaments.limit: 1..200 (got ${String(lt.limit)})`;
    const h = body.action?.holdem;
    if (h && (h.move === croupier.HoldemMove.HOLDEM_BET || h.move === croupier.HoldemMove.HOLDEM_RAISE))
        return positive("action.holdem.amount", h.amount, "required for BET/RAISE, an integer > 0");
    const b = body.action?.blackjack;
    if (b && b.move === croupier.BlackjackMove.BJ_BET)
        return positive("action.blackjack.amount", b.amount, "required for BET, an integer > 0");
    return null;
}

const RETRIABLE = new Set([
    croupier.ErrorCode.DEADLINE_EXCEEDED,
    croupier.ErrorCode.UNAVAILABLE,
    croupier.ErrorCode.DRAINING,
]);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function defaultWebSocket(): Promise<WebSocketCtor> {
    const g = globalThis as unknown as { WebSocket?: WebSocketCtor };
    if (g.WebSocket !== undefined)
        return g.WebSocket;
    const mod = await import("ws");
    return mod.default as unknown as WebSocketCtor;
}

export class Client {
    private readonly opts: Required<Omit<ClientOptions, "WebSocket">> & { WebSocket?: WebSocketCtor };
    private ws: WebSocketLike | null = null;
    private urlIndex = 0;
    private nextId = 1;
    private readonly pending = new Map<number, Pending>();
    private readonly listeners = new Map<string, Set<(arg: unknown) => void>>();
    private state: "idle" | "open" | "reconnecting" | "closed" = "idle";
    private seated = false;
    private reconnectDelay = 0;
    private reconnecting: Promise<void> | null = null;
    private gen = 0; /* connections opened */
    /* Keepalive of the current connection: when it last received anything, when the last probe
     * Ping went out (0: none), and the timer of the next look. */
    private lastRxAt = 0;
    private probeAt = 0;
    private keepaliveTimer: ReturnType<typeof setTimeout> | null = null;
    /* Ends the Resume of a reconnect at once when its connection is lost too (resumeNow). */
    private resumeLost: (() => void) | null = null;
    /* The last Error pushed without a request id on this connection (see refused()). */
    private pushedError: croupier.IError | null = null;
    /* The tournaments this client follows (asked about or registered in), most recent last:
     * asked again after a reconnect so that the new gateway pushes their events. */
    private followed: number[] = [];
    /* What watch() watches: sent again after every reconnect (docs/spectators.md). */
    private watchTarget: WatchTarget | null = null;
    /* The tournament seat playTournament follows (one at a time). */
    private tour: TourFollow | null = null;
    /** The player id and the last LoginResult, once logged in. */
    playerId = 0;
    login: croupier.ILoginResult | null = null;

    constructor(opts: ClientOptions) {
        if (opts.urls.length === 0)
            throw new Error("croupier: no gateway URL");
        this.opts = {
            requestBudgetMs: 10000,
            connectTimeoutMs: 5000,
            maxBackoffMs: 5000,
            keepaliveIdleMs: 3000,
            keepaliveTimeoutMs: 5000,
            ...opts,
        };
    }

    on<E extends ClientEvent>(event: E, fn: (arg: EventMap[E]) => void): this {
        let set = this.listeners.get(event);
        if (set === undefined)
            this.listeners.set(event, (set = new Set()));
        set.add(fn as (arg: unknown) => void);
        return this;
    }

    off<E extends ClientEvent>(event: E, fn: (arg: EventMap[E]) => void): this {
        this.listeners.get(event)?.delete(fn as (arg: unknown) => void);
        return this;
    }

    private emit<E extends ClientEvent>(event: E, arg: EventMap[E]): void {
        for (const fn of this.listeners.get(event) ?? [])
            fn(arg);
    }

    /** The URL the client is connected (or connecting) to. */
    get url(): string {
        return this.opts.urls[this.urlIndex % this.opts.urls.length];
    }

    /** Connects to the first gateway that answers (in list order) and logs in. */
    async connect(): Promise<croupier.ILoginResult> {
        let last: unknown = null;
        for (let i = 0; i < this.opts.urls.length; i++) {
            try {
                const r = await this.open(this.url);
                this.state = "open";
                this.keepaliveStart();
                return r;
            } catch (e) {
                if (e instanceof CroupierError)
                    throw e; /* the token is refused: another gateway would refuse it too */
                last = e;
                this.urlIndex++;
            }
        }
        throw last instanceof Error ? last : new Error("croupier: no gateway answered");
    }

    /** Closes the connection for good (no reconnect); waiting requests are rejected. */
    close(): void {
        this.state = "closed";
        this.keepaliveStop();
        if (this.tour !== null)
            this.tourStop(this.tour, new Error("croupier: client closed"));
        this.ws?.close(1000, "client closing");
        this.ws = null;
        for (const p of this.pending.values()) {
            clearTimeout(p.timer);
            p.reject(new Error("croupier: client closed"));
        }
        this.pending.clear();
    }

    listTables(filter: { engine?: croupier.Engine; game?: string; stake?: number } = {}):
        Promise<croupier.ITableAd[]> {
        return this.request({ listTables: filter }).then((m) => m.tableList?.tables ?? []);
    }

    /** Joins a table: `{joined}` (the new seat), or `{snapshot}` when the game server finds the
     * player already seated there (that seat's state; no second seat is taken). */
    async join(engine: croupier.Engine, game: string, stake: number): Promise<JoinResult> {
        const m = await this.request({ join: { engine, game, stake } });
        this.seated = true;
        if (m.joined)
            return { joined: m.joined };
        if (m.snapshot)
            return { snapshot: m.snapshot };
        throw new Error(`croupier: a Join answered by ${m.body ?? "nothing"}`);
    }

    /** One move; resolves with the Result (its event_seq is the table's number of the Play). */
    async act(action: croupier.IAction): Promise<{ eventSeq: number }> {
        const m = await this.request({ action });
        return { eventSeq: Number(m.eventSeq ?? 0) };
    }

    async leave(): Promise<void> {
        await this.request({ leave: {} });
        this.seated = false;
    }

    /** Creates a private room and sits in it as its host: the Joined, whose `room.code` the
     * others join by (docs/protocol.md "Private rooms"). */
    async createRoom(engine: croupier.Engine, game: string, stake: number,
                     rules: croupier.IRoomRules): Promise<croupier.IJoined> {
        const m = await this.request({ createRoom: { engine, game, stake, rules } });
        this.seated = true;
        return m.joined as croupier.IJoined;
    }

    /** Sits in the private room of a 6-digit code. Rejects ROOM_NOT_FOUND, ROOM_FULL,
     * ROOM_STARTED, ROOM_ENDED. */
    async joinRoom(code: string): Promise<croupier.IJoined> {
        const m = await this.request({ joinRoom: { code } });
        this.seated = true;
        return m.joined as croupier.IJoined;
    }

    /** A room's record by code, seated or not: its state and scoreboard, also after its end. */
    async getRoom(code: string): Promise<croupier.IRoomInfo> {
        const m = await this.request({ getRoom: { code } });
        return m.room as croupier.IRoomInfo;
    }

    /** A finished round's replay (docs/replays.md): `{roundId, game}` of a round you were dealt
     * into (your own cards, and what the game's policy shows after the round; without `game`
     * the gateway tries the games of the round's service), or `{code}`, a
     * share code, for anyone logged in. Rejects NOT_IN_ROUND (not your round: ask with a code),
     * NO_SUCH_ROUND, REPLAY_CODE_UNKNOWN (never made, or expired), BAD_REQUEST. */
    async getReplay(q: { roundId: string; game?: string } | { code: string }):
        Promise<croupier.IReplay> {
        const m = await this.request({ getReplay: q });
        return m.replay as croupier.IReplay;
    }

    /** A share code for a round you played: 8 digits anyone logged in may replay with
     * `getReplay({code})` until `expiresUnixMs` (the gateway's --replay-code-ttl-s, 7 days by
     * default); asked again, the same code. Rejects NOT_IN_ROUND, NO_SUCH_ROUND, BAD_REQUEST. */
    async shareReplay(roundId: string, game: string): Promise<croupier.IReplayShared> {
        const m = await this.request({ shareReplay: { roundId, game } });
        return m.replayShared as croupier.IReplayShared;
    }

    /** Watches a table as a spectator (docs/spectators.md): resolves to its public Snapshot
     * (`spectator` true, no seat's private cards); its public events then arrive as "deal",
     * "turn", "play", "roundEnd", "gameEvent", and a followed player's next tables as
     * "watchSnapshot". The target is remembered and watched again after every reconnect (a
     * gateway rollout). A watch session cannot join, act or leave (WATCHING). Rejects
     * NO_SUCH_TABLE, NOT_WATCHABLE, WATCH_FULL, NOT_SEATED (the player sits nowhere),
     * ALREADY_SEATED (you hold a seat), BAD_REQUEST. */
    async watch(target: WatchTarget): Promise<croupier.ISnapshot> {
        this.watchTarget = null; /* a new Watch replaces the session, refused or not */
        const m = await this.request({ watch: { ...target } });
        this.watchTarget = { ...target } as WatchTarget;
        return m.snapshot as croupier.ISnapshot;
    }

    /** Stops watching (also when nothing is watched). */
    async unwatch(): Promise<void> {
        this.watchTarget = null;
        await this.request({ unwatch: {} });
    }

    /** What `watch()` watches now, or null. */
    watching(): WatchTarget | null {
        return this.watchTarget;
    }

    /* After a reconnect: the watch sent again; its Snapshot emitted as "watchSnapshot", a
     * refusal as "watchEnded" (the target forgotten). */
    private rewatch(): void {
        const t = this.watchTarget;
        if (t === null)
            return;
        this.request({ watch: { ...t } })
            .then((m) => { if (m.snapshot) this.emit("watchSnapshot", m.snapshot); })
            .catch((e: unknown) => {
                if (this.watchTarget !== t)
                    return;
                this.watchTarget = null;
                const code = e instanceof CroupierError ? e.code : croupier.ErrorCode.UNAVAILABLE;
                this.emit("watchEnded", { code, detail: e instanceof Error ? e.message : "" });
            });
    }

    /** The host disbands its room before the first deal (NOT_HOST, ROOM_STARTED otherwise). */
    async disbandRoom(): Promise<void> {
        await this.request({ leave: { disbandRoom: true } });
        this.seated = false;
    }

    /** The tournaments, newest first (docs/protocol.md "Tournaments"): `status` filters
     * (absent: any), `limit` 1..200 (default 50; anything else is BAD_REQUEST at once, nothing
     * sent). */
    async listTournaments(opts: { status?: croupier.TournamentStatus; limit?: number } = {}):
        Promise<TournamentListResult> {
        const m = await this.request({ listTournaments: opts });
        const l = m.tournamentList;
        return { tournaments: l?.tournaments ?? [], total: Number(l?.total ?? 0) };
    }

    /** One tournament's state with your entry (`you`, absent without one); from then on this
     * connection gets its `tournamentEvent` pushes. Rejects NO_SUCH_TOURNAMENT. */
    async getTournament(id: number): Promise<croupier.ITournamentInfo> {
        const m = await this.request({ getTournament: { tournament: id } });
        this.follow(id);
        return m.tournament as croupier.ITournamentInfo;
    }

    /** Registers (buy-in + fee from the wallet), or re-enters an MTT that allows it. Rejects
     * ALREADY_REGISTERED, TOURNAMENT_FULL, REGISTRATION_CLOSED, INSUFFICIENT_FUNDS, NO_REENTRY,
     * TOURNAMENT_OVER, NO_SUCH_TOURNAMENT. */
    async registerTournament(id: number): Promise<void> {
        await this.request({ registerTournament: { tournament: id } });
        this.follow(id);
    }

    /** Unregisters before the start (buy-in and fee back). Rejects NOT_REGISTERED,
     * REGISTRATION_CLOSED, TOURNAMENT_OVER, NO_SUCH_TOURNAMENT. */
    async unregisterTournament(id: number): Promise<void> {
        await this.request({ unregisterTournament: { tournament: id } });
    }

    /** Asks once for your tournament table: its Snapshot (from then on `act()` plays there).
     * Rejects NOT_SEATED with `retriable` true while you wait for a seat (ask again in a few
     * hundred ms), NOT_REGISTERED, TOURNAMENT_OVER (over, or you are out), NO_SUCH_TOURNAMENT,
     * ALREADY_SEATED (a cash table or room seat: leave it first). `playTournament()` does the
     * asking and follows you from table to table. */
    async takeTournamentSeat(id: number): Promise<croupier.ISnapshot> {
        const m = await this.request({ takeTournamentSeat: { tournament: id } });
        this.seated = true;
        this.follow(id);
        return m.snapshot as croupier.ISnapshot;
    }

    /**
     * Plays a tournament you are registered in: asks for your table until you are seated
     * (NOT_SEATED retriable: again after 300-500 ms) and resolves with its Snapshot; then follows
     * you: at each TableClosing{CLOSING_TOURNAMENT} of your table (moved, table broken, its
     * server gone) and after each reconnect it asks again, until the tournament is over for you
     * (your ELIMINATED or FINISHED push, TOURNAMENT_OVER, NOT_REGISTERED). Each step is a
     * "tournamentSeat" event (TournamentSeatEvent); play the table with the usual "turn" and
     * `act()`. There is no leaving a tournament seat (a Leave is refused): `stopTournament()`
     * only stops the following. Rejects when no seat is had: NOT_REGISTERED, TOURNAMENT_OVER,
     * NO_SUCH_TOURNAMENT, ALREADY_SEATED (CroupierError), DEADLINE_EXCEEDED after
     * `timeoutMs`, the signal's reason when aborted. One tournament at a time: a second call
     * for another stops following the first.
     */
    playTournament(id: number, opts: PlayTournamentOptions = {}): Promise<croupier.ISnapshot> {
        if (this.state === "closed")
            return Promise.reject(new Error("croupier: client closed"));
        if (!Number.isSafeInteger(id) || id <= 0)
            return Promise.reject(new CroupierError(croupier.ErrorCode.BAD_REQUEST,
                `a tournament id, an integer > 0 (got ${String(id)})`, false));
        if (opts.signal?.aborted)
            return Promise.reject(opts.signal.reason ?? new Error("aborted"));
        if (this.tour !== null)
            this.tourStop(this.tour, new Error(`croupier: now playing tournament ${id}`));
        return new Promise((resolve, reject) => {
            const f: TourFollow = {
                id, deskId: 0n, running: false, again: false, done: false, out: false, waited: false,
                deadline: opts.timeoutMs !== undefined ? Date.now() + opts.timeoutMs : Infinity,
                first: { resolve, reject }, wake: null, unabort: null,
            };
            this.tour = f;
            const signal = opts.signal;
            if (signal !== undefined) {
                const onAbort = () => this.tourStop(f, signal.reason instanceof Error ? signal.reason
                    : new Error("croupier: playTournament aborted"));
                signal.addEventListener("abort", onAbort, { once: true });
                f.unabort = () => signal.removeEventListener("abort", onAbort);
            }
            void this.tourStart(f);
        });
    }

    /** Stops following the tournament seat of playTournament ("stopped"); sends nothing: the
     * seat is kept and played by the automatic move while you are away. */
    stopTournament(): void {
        if (this.tour !== null)
            this.tourStop(this.tour, new Error("croupier: stopTournament"));
    }

    /* The first ask: GetTournament (this connection follows its pushes; an entry already out
     * ends here), then the seat. */
    private async tourStart(f: TourFollow): Promise<void> {
        try {
            const info = await this.getTournament(f.id);
            if (f.done)
                return;
            if (await this.tourEnded(f, info, null))
                return;
        } catch (e) {
            if (f.done)
                return;
            if (!(e instanceof CroupierError && e.retriable)) {
                this.tourStop(f, e instanceof Error ? e : new Error(String(e)));
                return;
            }
            /* the director slow to answer: the seat is asked for anyway */
        }
        this.tourAsk(f);
    }

    /* Asks for the seat now, or once the ask in flight is answered. */
    private tourAsk(f: TourFollow): void {
        if (f.done || f.out)
            return;
        if (f.running) {
            f.again = true;
            f.wake?.(); /* a wait between asks ends now */
            return;
        }
        f.running = true;
        void (async () => {
            try {
                do {
                    f.again = false;
                    await this.tourSeat(f);
                } while (f.again && !f.done);
            } finally {
                f.running = false;
            }
        })();
    }

    /* TakeTournamentSeat until seated or out. */
    private async tourSeat(f: TourFollow): Promise<void> {
        f.waited = false;
        for (;;) {
            if (f.done || f.out)
                return;
            try {
                const snap = await this.takeTournamentSeat(f.id);
                if (f.done)
                    return;
                f.deskId = BigInt(snap.deskId ?? 0n);
                this.emit("tournamentSeat", { tournament: f.id, kind: "seated", deskId: f.deskId, snapshot: snap });
                const first = f.first;
                f.first = null;
                first?.resolve(snap);
                return;
            } catch (e) {
                if (f.done)
                    return;
                if (!(e instanceof CroupierError)) {
                    this.tourStop(f, e instanceof Error ? e : new Error(String(e)));
                    return;
                }
                const C = croupier.ErrorCode;
                if (e.code === C.TOURNAMENT_OVER || e.code === C.NOT_REGISTERED) {
                    await this.tourOver(f, e);
                    return;
                }
                if (!e.retriable) {
                    this.tourStop(f, e);
                    return;
                }
                if (f.first !== null && Date.now() >= f.deadline) {
                    this.tourStop(f, new CroupierError(C.DEADLINE_EXCEEDED,
                        `no tournament seat within the timeout (${e.message})`, true));
                    return;
                }
                if (!f.waited && e.code === C.NOT_SEATED) {
                    f.waited = true;
                    this.emit("tournamentSeat", { tournament: f.id, kind: "waiting", detail: e.message });
                }
                let wait = TOUR_RETRY_MS + Math.random() * TOUR_RETRY_JITTER_MS;
                if (f.first !== null)
                    wait = Math.max(0, Math.min(wait, f.deadline - Date.now()));
                await new Promise<void>((r) => {
                    const t = setTimeout(() => { f.wake = null; r(); }, wait);
                    f.wake = () => { clearTimeout(t); f.wake = null; r(); };
                });
            }
        }
    }

    /* TOURNAMENT_OVER or NOT_REGISTERED: the place and prize from the entry, unless a push told
     * them meanwhile. A player busted in a hand-for-hand round is placed at its end: his entry
     * is read again until it has a place (at most TOUR_PLACE_WAIT_MS; his ELIMINATED push ends
     * the wait too). */
    private async tourOver(f: TourFollow, e: CroupierError): Promise<void> {
        const end = Date.now() + TOUR_PLACE_WAIT_MS;
        for (;;) {
            let info: croupier.ITournamentInfo | null = null;
            try {
                info = await this.getTournament(f.id);
            } catch { /* the place stays unknown */ }
            if (f.done)
                return;
            const busted = info?.you?.state === croupier.TournamentEntryState.TOUR_ENTRY_BUSTED;
            if (info !== null && busted && info.format === croupier.TournamentFormat.TOUR_MATCH &&
                info.status === croupier.TournamentStatus.TOUR_RUNNING) {
                this.tourOut(f, "you are out of the match: your place comes with its end");
                return; /* its end is pushed (FINISHED) */
            }
            if (info !== null && busted && !(Number(info.you?.place ?? 0) > 0) && Date.now() < end) {
                await sleep(TOUR_RETRY_MS);
                continue;
            }
            if (info === null || !(await this.tourEnded(f, info, e)))
                this.tourFinish(f, 0, 0, false, e.code === croupier.ErrorCode.NOT_REGISTERED
                    ? "NOT_REGISTERED" : "TOURNAMENT_OVER");
            return;
        }
    }

    /* Whether the entry says the tournament is over for the player (then "finished"). refusal:
     * the TakeTournamentSeat refusal that asked (null: the first look). */
    private async tourEnded(f: TourFollow, info: croupier.ITournamentInfo,
                            refusal: CroupierError | null): Promise<boolean> {
        const ES = croupier.TournamentEntryState, S = croupier.TournamentStatus;
        const you = info.you;
        const place = Number(you?.place ?? 0), prize = Number(you?.prize ?? 0);
        const item = you?.item ?? undefined;
        if (info.status === S.TOUR_CANCELLED) {
            this.tourFinish(f, place, prize, false, "CANCELLED");
            return true;
        }
        if (you === null || you === undefined) {
            if (refusal === null && info.status !== S.TOUR_FINISHED)
                return false; /* TakeTournamentSeat says NOT_REGISTERED */
            this.tourFinish(f, 0, 0, false, "NOT_REGISTERED");
            return true;
        }
        const won = you.state === ES.TOUR_ENTRY_WON;
        if (won || you.state === ES.TOUR_ENTRY_OUT || you.state === ES.TOUR_ENTRY_REFUNDED ||
            you.state === ES.TOUR_ENTRY_CANCELLED || info.status === S.TOUR_FINISHED || refusal !== null) {
            this.tourFinish(f, place, prize, won, won ? "FINISHED" : refusal !== null &&
                refusal.code === croupier.ErrorCode.NOT_REGISTERED ? "NOT_REGISTERED" : "TOURNAMENT_OVER",
                item);
            return true;
        }
        return false;
    }

    /* A tournament push for the followed tournament: the player's ELIMINATED or FINISHED ends
     * the following with its place and prize; another's FINISHED or a CANCELLED reads the entry. */
    private tourOnEvent(ev: croupier.ITournamentEvent): void {
        const f = this.tour;
        if (f === null || f.done || Number(ev.tournament) !== f.id)
            return;
        const K = croupier.TournamentEventKind;
        const mine = Number(ev.player ?? 0) === this.playerId;
        if (ev.kind === K.TOUR_EVENT_ELIMINATED && mine && !(Number(ev.place ?? 0) > 0))
            this.tourOut(f, ev.detail ?? "you are out of the match"); /* the place comes at its end */
        else if (ev.kind === K.TOUR_EVENT_ELIMINATED && mine)
            this.tourFinish(f, Number(ev.place ?? 0), Number(ev.prize ?? 0), false, "ELIMINATED",
                ev.item ?? undefined);
        else if (ev.kind === K.TOUR_EVENT_MOVED_TABLE && mine && f.running)
            f.wake?.(); /* a match's next table deals now: ask at once */
        else if (ev.kind === K.TOUR_EVENT_FINISHED && mine)
            this.tourFinish(f, Number(ev.place ?? 1), Number(ev.prize ?? 0), true, "FINISHED",
                ev.item ?? undefined);
        else if (ev.kind === K.TOUR_EVENT_FINISHED || ev.kind === K.TOUR_EVENT_CANCELLED)
            void this.tourOver(f, new CroupierError(croupier.ErrorCode.TOURNAMENT_OVER,
                "the tournament is over", false));
    }

    /* TableClosing{CLOSING_TOURNAMENT} of the table followed (or of none named): "left", and the
     * next seat asked for. A closing of a table left before (the seat taken since stays) asks
     * nothing (tourOnClosingGone: whether the player's seat is gone). */
    private tourOnClosingGone(t: croupier.ITableClosing): boolean {
        const f = this.tour, desk = BigInt(t.deskId ?? 0n);
        return f === null || f.done || desk === 0n || f.deskId === 0n || desk === f.deskId;
    }

    private tourOnClosing(t: croupier.ITableClosing): void {
        const f = this.tour;
        const desk = BigInt(t.deskId ?? 0n);
        if (f === null || f.done)
            return;
        f.deskId = 0n;
        this.emit("tournamentSeat", { tournament: f.id, kind: "left", deskId: desk, detail: t.detail ?? "" });
        this.tourAsk(f);
    }

    /* Out of a match: no seat asked any more; its end brings the place. */
    private tourOut(f: TourFollow, detail: string): void {
        if (f.done || f.out)
            return;
        f.out = true;
        f.wake?.();
        this.emit("tournamentSeat", { tournament: f.id, kind: "out", detail });
    }

    private tourFinish(f: TourFollow, place: number, prize: number, won: boolean,
                       reason: "ELIMINATED" | "FINISHED" | "TOURNAMENT_OVER" | "NOT_REGISTERED" | "CANCELLED",
                       item?: string): void {
        if (f.done)
            return;
        this.tourEnd(f);
        this.emit("tournamentSeat", { tournament: f.id, kind: "finished", place, prize,
            ...(item ? { item } : {}), won, reason });
        const first = f.first;
        f.first = null;
        first?.reject(new CroupierError(reason === "NOT_REGISTERED" ? croupier.ErrorCode.NOT_REGISTERED
            : croupier.ErrorCode.TOURNAMENT_OVER, `the tournament is over for you (${reason}` +
            (place > 0 ? `, place ${place}` : "") + ")", false));
    }

    private tourStop(f: TourFollow, error: Error): void {
        if (f.done)
            return;
        this.tourEnd(f);
        this.emit("tournamentSeat", { tournament: f.id, kind: "stopped", error });
        const first = f.first;
        f.first = null;
        first?.reject(error);
    }

    private tourEnd(f: TourFollow): void {
        f.done = true;
        f.wake?.();
        f.unabort?.();
        f.unabort = null;
        if (this.tour === f)
            this.tour = null;
    }

    /* The gateway follows the tournaments a connection asked about or registered in (at most
     * TOURNAMENTS_FOLLOWED, the most recent); the client keeps the same list to ask again. */
    private follow(id: number): void {
        this.followed = this.followed.filter((t) => t !== id);
        this.followed.push(id);
        if (this.followed.length > TOURNAMENTS_FOLLOWED)
            this.followed.shift();
    }

    /* After a reconnect: each followed tournament asked again (the new gateway then pushes its
     * events), its state emitted as "tournamentInfo". A refusal (the tournament gone) or no
     * answer is dropped silently: the application still has the last state it saw. */
    private refollow(): void {
        for (const id of [...this.followed])
            this.request({ getTournament: { tournament: id } })
                .then((m) => { if (m.tournament) this.emit("tournamentInfo", m.tournament); })
                .catch(() => {});
    }

    async resume(): Promise<croupier.ISnapshot> {
        const m = await this.request({ resume: {} });
        this.seated = true;
        return m.snapshot as croupier.ISnapshot;
    }

    async ping(): Promise<number> {
        const m = await this.request({ ping: { nonce: Date.now() } });
        return Number(m.pong?.serverTimeMs ?? 0);
    }

    /** Sends a request and waits for its answer, retrying retriable refusals with the same id
     * within the budget, across reconnects. Rejects with CroupierError. */
    request(body: Omit<croupier.IClientMessage, "requestId">): Promise<croupier.ServerMessage> {
        if (this.state === "closed")
            return Promise.reject(new Error("croupier: client closed"));
        const bad = checkRequest(body);
        if (bad !== null)
            return Promise.reject(new CroupierError(croupier.ErrorCode.BAD_REQUEST, bad, false));
        const id = this.nextId++;
        const msg: croupier.IClientMessage = { ...body, requestId: id };
        return new Promise((resolve, reject) => {
            const p: Pending = { id, msg, deadline: Date.now() + this.opts.requestBudgetMs, resolve,
                                 reject, sentGen: 0 };
            p.timer = setTimeout(() => this.expire(p), this.opts.requestBudgetMs);
            this.pending.set(id, p);
            if (this.state === "open")
                this.send(p);
            /* else: sent once the reconnect has logged in */
        });
    }

    private expire(p: Pending): void {
        if (!this.pending.delete(p.id))
            return;
        p.reject(new CroupierError(croupier.ErrorCode.DEADLINE_EXCEEDED,
            "no answer within the request budget", true));
    }

    private send(p: Pending): void {
        if (this.ws !== null && this.ws.readyState === 1) {
            p.sentGen = this.gen;
            this.ws.send(croupier.ClientMessage.encode(p.msg).finish());
        }
    }

    /* One connection: open, login (LoginResult or CroupierError), then the message loop. */
    private async open(url: string): Promise<croupier.ILoginResult> {
        const WS = this.opts.WebSocket ?? (await defaultWebSocket());
        const ws = new WS(url);
        ws.binaryType = "arraybuffer";
        this.ws = ws;
        this.gen++;
        this.pushedError = null;
        const token = typeof this.opts.token === "function" ? await this.opts.token()
                                                             : this.opts.token;
        return new Promise((resolve, reject) => {
            const loginId = this.nextId++;
            let done = false;
            const timer = setTimeout(() => {
                if (!done) {
                    done = true;
                    ws.close(1000, "login timeout");
                    reject(new Error(`croupier: ${url}: no login answer`));
                }
            }, this.opts.connectTimeoutMs);
            ws.onopen = () => {
                ws.send(croupier.ClientMessage.encode({ requestId: loginId, login: { token } })
                            .finish());
            };
            ws.onerror = () => {};
            ws.onclose = (ev) => {
                if (!done) {
                    done = true;
                    clearTimeout(timer);
                    reject(new Error(`croupier: ${url}: closed (${ev.code} ${ev.reason})`));
                    return;
                }
                if (this.ws === ws) {
                    if (ev.code === 1007)
                        this.refused();
                    this.lost(ev.code, ev.reason);
                }
            };
            ws.onmessage = (ev) => {
                if (this.ws === ws)
                    this.lastRxAt = Date.now();
                const m = croupier.ServerMessage.decode(new Uint8Array(ev.data as ArrayBuffer));
                if (!done && Number(m.requestId ?? 0) === loginId) {
                    done = true;
                    clearTimeout(timer);
                    if (m.loginResult) {
                        this.login = m.loginResult;
                        this.playerId = Number(m.loginResult.playerId);
                        resolve(m.loginResult);
                    } else {
                        const e = m.result?.error ?? m.error;
                        reject(new CroupierError(e?.code ?? 0, e?.message ?? "login refused",
                                                 e?.retriable ?? false));
                        ws.close(1000, "login refused");
                    }
                    return;
                }
                if (this.ws === ws)
                    this.onMessage(m);
            };
        });
    }

    private onMessage(m: croupier.ServerMessage): void {
        const rid = Number(m.requestId ?? 0);
        if (rid !== 0) {
            const p = this.pending.get(rid);
            if (p === undefined)
                return; /* an answer to a request given up on */
            const e = m.result?.error ?? (m.body === "error" ? m.error : null);
            if (e) {
                const code = e.code ?? 0;
                if (RETRIABLE.has(code) && Date.now() + 50 < p.deadline) {
                    /* the same id: the gateway and the game server apply it at most once */
                    setTimeout(() => {
                        if (this.pending.has(p.id) && this.state === "open")
                            this.send(p);
                    }, 50);
                    return;
                }
                this.pending.delete(rid);
                clearTimeout(p.timer);
                p.reject(new CroupierError(code, e.message ?? "", e.retriable ?? false));
                return;
            }
            this.pending.delete(rid);
            clearTimeout(p.timer);
            p.resolve(m);
            return;
        }
        switch (m.body) {
        case "deal": this.emit("deal", m.deal!); break;
        case "turn": this.emit("turn", m.turn!); break;
        case "play": this.emit("play", m.play!); break;
        case "roundEnd": this.emit("roundEnd", m.roundEnd!); break;
        case "snapshot":
            if (m.snapshot!.spectator)
                this.emit("watchSnapshot", m.snapshot!); /* a followed player's next table */
            else
                this.emit("snapshot", m.snapshot!);
            break;
        case "watchEnded":
            this.watchTarget = null;
            this.emit("watchEnded", m.watchEnded!);
            break;
        case "room": this.emit("room", m.room!); break;
        case "gameEvent": this.emit("gameEvent", m.gameEvent!); break;
        case "tournamentEvent":
            this.emit("tournamentEvent", m.tournamentEvent!);
            this.tourOnEvent(m.tournamentEvent!);
            break;
        case "moved":
            this.seated = true;
            this.emit("moved", m.moved!);
            break;
        case "tableClosing": {
            const t = m.tableClosing!;
            const tour = t.reason === croupier.ClosingReason.CLOSING_TOURNAMENT;
            /* a tournament table left before: the seat taken since is kept */
            const gone = tour && this.tour !== null ? this.tourOnClosingGone(t) : true;
            if (!t.afterMs && gone)
                this.seated = false; /* no move follows: join again */
            this.emit("tableClosing", t);
            if (tour && gone)
                this.tourOnClosing(t);
            break;
        }
        case "goAway": {
            const g = m.goAway!;
            this.emit("goAway", g);
            if (g.reason === croupier.GoAwayReason.GOAWAY_SESSION_REPLACED) {
                this.state = "closed";
                this.emit("closed", { reason: "session replaced by a newer login" });
            } else {
                this.reconnectDelay = Number(g.reconnectDelayMs ?? 0);
            }
            break;
        }
        case "error":
            /* A refusal without a request id (docs/protocol.md "Transports", close 1007): the
             * close that follows fails the requests sent on this connection (refused()). */
            this.pushedError = m.error ?? null;
            break;
        default:
            break;
        }
    }

    /* The gateway closed with 1007: a request it could not accept (the gateway names it in the
     * Error it pushes first, and that request is already rejected). Requests still waiting that
     * went out on this connection are rejected with the pushed Error, not sent again into the
     * same refusal. */
    private refused(): void {
        const e = this.pushedError;
        this.pushedError = null;
        if (e === null)
            return;
        for (const p of [...this.pending.values()]) {
            if (p.sentGen !== this.gen)
                continue;
            this.pending.delete(p.id);
            clearTimeout(p.timer);
            p.reject(new CroupierError(e.code ?? 0, e.message ?? "", false));
        }
    }

    /* The keepalive of a logged-in connection (docs/protocol.md "Keepalive"). */
    private keepaliveStart(): void {
        this.keepaliveStop();
        if (this.opts.keepaliveIdleMs <= 0)
            return;
        this.lastRxAt = Date.now();
        this.probeAt = 0;
        this.keepaliveArm(this.opts.keepaliveIdleMs);
    }

    private keepaliveStop(): void {
        if (this.keepaliveTimer !== null)
            clearTimeout(this.keepaliveTimer);
        this.keepaliveTimer = null;
    }

    private keepaliveArm(ms: number): void {
        this.keepaliveTimer = setTimeout(() => this.keepaliveCheck(), Math.max(ms, 1));
    }

    /* Received nothing for keepaliveIdleMs: a Ping (outside the request map: its Pong, like any
     * frame, only proves the gateway alive). Still nothing keepaliveTimeoutMs after it: the
     * gateway is silent. A frozen gateway never answers a close either, so the socket is
     * abandoned at once (terminate() where the WebSocket has it, as `ws` does) and the loss
     * handled now, not when the close handshake would time out. */
    private keepaliveCheck(): void {
        this.keepaliveTimer = null;
        const ws = this.ws;
        if (ws === null || this.state !== "open")
            return;
        const now = Date.now(), idle = this.opts.keepaliveIdleMs;
        if (now - this.lastRxAt < idle) {
            this.keepaliveArm(this.lastRxAt + idle - now);
            return;
        }
        if (this.probeAt <= this.lastRxAt) {
            this.probeAt = now;
            if (ws.readyState === 1)
                ws.send(croupier.ClientMessage.encode({ requestId: this.nextId++,
                                                        ping: { nonce: now } }).finish());
            this.keepaliveArm(this.opts.keepaliveTimeoutMs);
            return;
        }
        if (now - this.probeAt < this.opts.keepaliveTimeoutMs) {
            this.keepaliveArm(this.probeAt + this.opts.keepaliveTimeoutMs - now);
            return;
        }
        const url = this.url, silentMs = now - this.lastRxAt;
        this.ws = null; /* its late onclose is no longer ours */
        const t = ws as unknown as { terminate?: () => void };
        try {
            if (typeof t.terminate === "function")
                t.terminate();
            else
                ws.close(4000, "gateway silent");
        } catch { /* already closing */ }
        this.emit("gatewaySilent", { url, silentMs });
        this.lost(4000, "gateway silent");
    }

    /* The connection ended: reconnect unless closed on purpose. */
    private lost(code: number, reason: string): void {
        this.keepaliveStop();
        this.ws = null;
        this.emit("disconnected", { code, reason });
        if (this.state === "closed")
            return;
        if (this.reconnecting !== null) {
            /* Lost again while the reconnect resumes (that gateway closed or went silent as
             * well): its loop goes on to the next gateway instead of waiting out the Resume. */
            this.resumeLost?.();
            return;
        }
        this.state = "reconnecting";
        this.reconnecting = this.reconnect().finally(() => (this.reconnecting = null));
    }

    private async reconnect(): Promise<void> {
        let delay = this.reconnectDelay;
        this.reconnectDelay = 0;
        let backoff = 100;
        for (;;) {
            if (delay > 0)
                await sleep(delay);
            if (this.state === "closed")
                return;
            this.urlIndex++; /* another gateway */
            try {
                const login = await this.open(this.url);
                let snapshot: croupier.ISnapshot | null = null;
                this.state = "open";
                this.keepaliveStart();
                if (login.seated || this.seated) {
                    const id = this.nextId++;
                    const r = await this.resumeNow(id);
                    if (r === "lost")
                        throw new Error(`croupier: ${this.url}: lost during the resume`);
                    snapshot = r;
                }
                /* The requests still waiting go again, with their ids (those not sent on this
                 * connection yet). */
                for (const p of this.pending.values())
                    if (p.sentGen !== this.gen)
                        this.send(p);
                if (snapshot !== null)
                    this.emit("snapshot", snapshot);
                this.emit("reconnected", { url: this.url, snapshot });
                this.refollow();
                this.rewatch();
                /* moved, busted or placed while away: the seat is asked for again */
                if (this.tour !== null)
                    this.tourAsk(this.tour);
                return;
            } catch (e) {
                if (e instanceof CroupierError && !e.retriable) {
                    this.close();
                    this.emit("closed", { reason: e.message });
                    return;
                }
                delay = Math.min(backoff, this.opts.maxBackoffMs) * (0.5 + Math.random() / 2);
                backoff *= 2;
            }
        }
    }

    /* A Resume sent ahead of the waiting requests; null when there is no seat any more, "lost"
     * when the connection was lost before its answer (the seat is still ours: resume it
     * through the next gateway). */
    private resumeNow(id: number): Promise<croupier.ISnapshot | null | "lost"> {
        return new Promise((resolve) => {
            const p: Pending = {
                id,
                msg: { requestId: id, resume: {} },
                deadline: Date.now() + this.opts.requestBudgetMs,
                resolve: (m) => {
                    this.resumeLost = null;
                    resolve(m.snapshot ?? null);
                },
                reject: () => {
                    this.resumeLost = null;
                    this.seated = false;
                    resolve(null);
                },
                sentGen: 0,
            };
            this.resumeLost = () => {
                this.resumeLost = null;
                if (this.pending.delete(id)) {
                    clearTimeout(p.timer);
                    resolve("lost");
                }
            };
            p.timer = setTimeout(() => this.expire(p), this.opts.requestBudgetMs);
            this.pending.set(id, p);
            this.send(p);
        });
    }
}
