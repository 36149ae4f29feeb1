/*
 * gs -- the game-server core that every engine plugs into (docs/architecture.md §3, §4).
 *
 * A gs owns the process-wide pieces an engine should never re-implement: the desk runtime, the
 * rpc links from gateways (one multiplexed link per gateway), routing of player requests to
 * desks, deadlines, idempotency by request id, replies and pushes back to the right link, the
 * index of live desks (so a drain that runs out of time can void them), and the money path.
 *
 * Threads. The gs's links live on the owner's main event_base ("main thread"). Desks live on
 * runtime workers. Everything an engine calls from a desk (gs_reply, gs_push, gs_seat, ...)
 * is safe from any thread: it encodes on the calling thread and hands bytes to the main thread
 * through one mutex-protected outbox, woken with event_active().
 *
 * Requests. A player request (join, leave, action, resume, player-gone) arrives on a link,
 * is checked (deadline, duplicate request id), then:
 *   - join goes to the engine's join() on the main thread, which posts it to a desk
 *     (usually a lobby desk) with gs_request_post();
 *   - leave / action / resume go to the desk the player is seated at (gs_seat()), or are
 *     answered NOT_SEATED;
 *   - player-gone goes to that desk too (no reply expected).
 * A request reaches a desk as a gs_request_t through gs_desk_ops_t.on_request, after the gs
 * has refused it with DEADLINE_EXCEEDED if its deadline passed while it was queued. The desk
 * answers with gs_reply() exactly once (player-gone excepted); the gs remembers the answer, and
 * a retry of an action carrying the same (player, client request id) -- through any gateway,
 * since client ids survive a reconnect -- gets the same answer (re-addressed to the retry's rpc
 * request id) without being applied again; other requests (idempotent at the desk) and actions
 * without a client id are remembered per (player, link, rpc request id). A retry that arrives
 * while the first attempt is in flight is answered when it is. Clients must therefore never
 * reuse an action's request id for another action of the same player (e.g. a new process
 * starts its counter from the clock, not from 1).
 *
 * Ownership. A gs_request_t belongs to whoever holds it: gs_request_post() passes it to a desk
 * (or frees it if the desk is gone, answering UNAVAILABLE), gs_reply() consumes it.
 */
#ifndef CROUPIER_GS_H
#define CROUPIER_GS_H

#include <stdbool.h>
#include <stdint.h>

#include "frame.h"
#include "metrics.h"
#include "money.h"
#include "runtime.h"

struct event_base;

typedef struct gs gs_t;

typedef enum {
    GS_REQ_JOIN = 1,
    GS_REQ_LEAVE = 2,
    GS_REQ_ACTION = 3,
    GS_REQ_RESUME = 4,
    GS_REQ_PLAYER_GONE = 5,
    GS_REQ_ADOPT = 6, /* take a whole table's handoff offer (engine_ops_t.adopt) */
    /* A gateway's spectators of a desk (rpc.proto WatchTable; docs/spectators.md): with a
     * request_id, one more spectator (player_id) asks to watch and is answered (the public
     * Snapshot, or WATCH_FULL / NOT_WATCHABLE / NO_SUCH_TABLE); with request_id 0 the link's
     * count changed (0: none left, also when the link was lost) and nothing is answered (free it
     * with gs_request_free). Reaches the desk named by frame->watch->desk_id. */
    GS_REQ_WATCH = 7,
} gs_req_kind_t;

typedef struct gs_request {
    gs_req_kind_t kind;
    uint64_t link_id;
    uint64_t request_id;
    uint64_t player_id;
    uint64_t session_id;
    uint64_t trace_id;
    int64_t deadline_ms;       /* absolute, on clock_mono_ms(); 0 = none */
    Croupier__RpcFrame *frame; /* the decoded frame (body: join/leave/action/resume) */
    gs_t *_gs;                 /* private: set by gs_request_post */
    uint64_t _dedupe;          /* private: the key its answer is remembered under */
} gs_request_t;

/* Desk callbacks of an engine. Every callback runs on the desk's worker thread. */
typedef struct gs_desk_ops {
    /* A player request (never an expired one). Answer with gs_reply() exactly once, except for
     * GS_REQ_PLAYER_GONE, which needs no answer (free it with gs_request_free()). Required. */
    void (*on_request)(rt_desk_t *desk, void *state, gs_request_t *req);
    /* A timer armed with rt_desk_timer_arm() expired. NULL: the desk arms no timers. */
    void (*on_timer)(rt_desk_t *desk, void *state, uint64_t cookie);
    /* Intake stopped (the server drains): start no next round; when the current round ends,
     * tell the seated players the table closes (gs_close_desk_seats). NULL only for desks that
     * never run rounds (a lobby). */
    void (*on_intake_stopped)(rt_desk_t *desk, void *state);
    /* The drain bound passed: void the unfinished round with refunds, tell the players why,
     * end it with rt_desk_end_round(RT_ROUND_VOIDED). NULL only for desks that never run
     * rounds (a lobby). */
    void (*on_void)(rt_desk_t *desk, void *state);
    /* The server fenced itself (gs_set_fenced: it could not confirm its lease in time, and
     * another server may soon return its chips, docs/queues.md "A server cut off from Redis"):
     * stop at once -- void a round in play (VOID_STORE_UNREACHABLE), close the table and tell
     * its players (TableClosing{CLOSING_STORE_UNREACHABLE}) without waiting for Redis. Called
     * whether or not a round runs. NULL: on_void runs instead when a round runs. */
    void (*on_fence)(rt_desk_t *desk, void *state);
    /* Messages of the engine's own types (>= GS_MSG_ENGINE). May be NULL. */
    void (*on_message)(rt_desk_t *desk, void *state, rt_msg_t *msg);
    /* The desk is destroyed; free state. May be NULL. */
    void (*on_destroy)(rt_desk_t *desk, void *state);
} gs_desk_ops_t;

/* Message types: the gs uses RT_MSG_USER..GS_MSG_ENGINE-1; engines start at GS_MSG_ENGINE. */
enum { GS_MSG_ENGINE = RT_MSG_USER + 16 };

/* The engine plugin interface: one per engine, chosen by --engine. */
typedef struct engine_ops {
    const char *name;        /* "traditional", "holdem", "persistent", "test" */
    Croupier__Engine engine; /* the protocol's engine value */
    /* Creates the engine (lobby desks, tables) at warm-up, on the main thread. games is the
     * --games list (comma-separated; NULL = the engine's default). Returns 0 or a negative
     * errno with a log line saying why. */
    int (*create)(gs_t *gs, const char *games, void **out);
    /* A join request, on the main thread: post it to a desk with gs_request_post(), or answer
     * it with gs_reply() (NO_SUCH_GAME, DRAINING...). */
    void (*join)(void *eng, gs_request_t *req);
    /* The games this engine serves, comma-separated (for the registry). */
    const char *(*games)(void *eng);
    /* Optional extra work at stop_intake (the runtime's intake is stopped by the gs). */
    void (*stop_intake)(void *eng);
    /* Called after the runtime stopped (all desks destroyed). */
    void (*destroy)(void *eng);
    /* Optional: checks the engine's rule options (gs_config_t.engine_options) against the
     * --games list before anything starts; 0, or -1 with the reason in err. NULL: the engine
     * takes no options. */
    int (*check_options)(const char *options, const char *games, char *err, size_t errlen);
    /* Optional: the engine's own flags (config.h table, names prefixed with the engine's name,
     * e.g. --zhajinhua-seats), parsed with the process's flags, listed by --help and checked at
     * start; they apply only when this engine runs. NULL: the engine has none. */
    const struct config_flag *(*flags)(void);
    /* Optional: an Adopt request (a whole table moving here from a draining server, rpc.proto
     * Adopt), on the main thread, like join(): post it to a desk or answer it. NULL: such
     * requests are answered UNKNOWN_REQUEST (the gateway then re-seats the players one by
     * one). A player already seated here never reaches it (answered with its Snapshot). */
    void (*adopt)(void *eng, gs_request_t *req);
    /* Optional: whether the engine runs with croupier-game --money-by-entity (docs/queues.md
     * "The game server's money by entity"): NULL when it does, else one line saying why not
     * (what of its money needs one slot), printed at start. A NULL function: it does not. */
    const char *(*entity_refusal)(void);
} engine_ops_t;

typedef struct gs_config {
    struct event_base *base; /* main loop; links and the outbox live here */
    unsigned workers;
    const engine_ops_t *engine;
    const char *games;
    const char *server_id; /* "<service>-<slot>", set later with gs_set_identity if unknown */
    metrics_registry_t *metrics;
    size_t link_output_cap; /* bytes queued to one link before it is dropped; 0 = 8 MiB */
    /* A link that received nothing (not even the gateway's RpcPing, sent every --link-ping-ms)
     * for this long is dropped: its gateway is frozen or cut off (docs/gateway.md "When a
     * gateway freezes"). Held from the link's first RpcPing on (a peer that never pings is
     * not judged by its silence). 0 = 10000; negative: never. */
    int link_silent_ms;
    int request_cache_max; /* remembered answers for retries; 0 = 65536 */
    /* The process's Redis (IP literal), for engines that keep state there besides money (e.g.
     * lobby ads); NULL when none. */
    const char *redis_host;
    int redis_port;
    /* With redis_master: find that Redis through Sentinel (common/sentinel.h); NULL = none. */
    const char *redis_sentinels;
    const char *redis_master;
    /* "IP:PORT,..." seeds of a Redis Cluster (rconn's cluster mode); NULL = none. */
    const char *redis_cluster;
    /* --redis-min-replicas and --redis-wait-ms: money the engine writes itself (table handoffs)
     * counts once WAIT reports this many replicas (docs/deploy.md "Failover and durability"). */
    int redis_min_replicas;
    int redis_wait_ms;
    const char *service; /* the lease service name (round ids, keys); NULL = engine name */
    /* Engine-specific rule options (the traditional engine's --trad-options), already checked
     * by the process; NULL = none. Copied. */
    const char *engine_options;
} gs_config_t;

/* Creates the runtime and the core (no listener yet). Returns 0 and *out, or a negative errno. */
int gs_create(const gs_config_t *cfg, gs_t **out);
/* Creates the engine (engine_ops.create). Returns its result. Main thread. */
int gs_start_engine(gs_t *gs);
/* Listens for gateway links on fd (already bound and listening). Main thread. Returns 0 or a
 * negative errno. */
int gs_listen_fd(gs_t *gs, int fd);
/* Stops accepting new links (existing links go on). Main thread. */
void gs_stop_listening(gs_t *gs);
/* Sets the identity told to gateways in LinkHelloAck. Main thread. */
void gs_set_identity(gs_t *gs, const char *server_id, uint32_t slot, uint64_t lease_epoch);
/* Stops intake: the runtime refuses new rounds, every desk is told, the engine's stop_intake
 * runs, joins are answered DRAINING. Idempotent, any thread. */
void gs_stop_intake(gs_t *gs);
bool gs_intake_stopped(const gs_t *gs);
/* Posts a void request to every live desk (the drain bound passed). Any thread. */
void gs_void_all(gs_t *gs);
/* Stops the runtime (desks destroyed), closes links, destroys the engine and frees all.
 * Main thread. NULL is a no-op. */
void gs_destroy(gs_t *gs);

rt_t *gs_rt(gs_t *gs);
/* The main event_base (links, engine join(); an engine may add its own events there). */
struct event_base *gs_base(gs_t *gs);
/* The Redis address and service name from the config (host NULL when none). */
const char *gs_redis_host(const gs_t *gs);
int gs_redis_port(const gs_t *gs);
/* The config's Sentinel list and master name (NULL when Redis is at the fixed host). */
const char *gs_redis_sentinels(const gs_t *gs);
const char *gs_redis_cluster(const gs_t *gs);
const char *gs_redis_master(const gs_t *gs);
/* gs_config_t.redis_min_replicas and redis_wait_ms. */
int gs_redis_min_replicas(const gs_t *gs);
int gs_redis_wait_ms(const gs_t *gs);
const char *gs_service(const gs_t *gs);
/* gs_config_t.engine_options (NULL when none), for the engine's create. */
const char *gs_engine_options(const gs_t *gs);
/* The server id ("<service>:<slot>") once the lease is held, else "unassigned". Main thread. */
const char *gs_server_id(const gs_t *gs);
void *gs_engine_state(gs_t *gs);
metrics_registry_t *gs_metrics(gs_t *gs);
/* Desks in a round with a human seated, plus desks moving their table as a whole (between
 * gs_table_move_begin and _end: the players are still there, waiting for the adopter): what the
 * drain waits for. */
uint64_t gs_human_desks(const gs_t *gs);
/* A desk's whole-table move begins / ends (tk.h "moves"). Any thread. */
void gs_table_move_begin(gs_t *gs);
void gs_table_move_end(gs_t *gs);
uint64_t gs_desks(const gs_t *gs);
/* Number of gateway links connected now. */
unsigned gs_links(const gs_t *gs);
/* Called (on the main thread) whenever human desks may have changed; for drain_notify. */
void gs_set_human_desks_observer(gs_t *gs, void (*fn)(void *arg), void *arg);

/* Creates a desk run by ops (see gs_desk_ops_t); any thread. Returns 0 and *out, or a negative
 * errno from rt_desk_create. */
int gs_desk_create(gs_t *gs, const gs_desk_ops_t *ops, void *state, int worker, rt_desk_id_t *out);
/* The gs of a desk created with gs_desk_create (desk thread). */
gs_t *gs_of_desk(rt_desk_t *desk);

/* Hands req to desk `to` (consumed). If the desk is gone the request is answered UNAVAILABLE
 * (retriable) and freed. Any thread. */
void gs_request_post(gs_t *gs, rt_desk_id_t to, gs_request_t *req);
/* Answers req with code (and payload when code == OK, else an Error carrying message) and
 * frees it. retriable marks errors the gateway may retry elsewhere. Any thread. */
void gs_reply(gs_t *gs, gs_request_t *req, Croupier__ErrorCode code, const char *message,
              const Croupier__ServerMessage *payload);
/* Frees a request without answering (only for GS_REQ_PLAYER_GONE). */
void gs_request_free(gs_request_t *req);

/* Sends msg to a player through the link their last request came from. Any thread. */
void gs_push(gs_t *gs, uint64_t player_id, const Croupier__ServerMessage *msg);
/* gs_push() of one msg to each of players[0, n): encoded once, and sent to each link as one
 * frame naming every player it serves there (RpcFrame.push_to, docs/protocol.md "One push, many
 * players") when its gateway takes them, else as one frame per player. Any thread. */
void gs_push_many(gs_t *gs, const uint64_t *players, size_t n, const Croupier__ServerMessage *msg);
/*
 * Spectators (docs/spectators.md). gs_push_watch: a desk's public event (a push every seat may
 * see, or its public variant), encoded once here and sent once to each link that watches the
 * desk, whose gateway writes the same bytes to each of its spectators. gs_watch_link: link_id
 * now watches desk (on) or no longer does; link_id 0 with on false: no link does (the desk
 * closes). Any thread; the desk keeps the counts (GS_REQ_WATCH), the main thread the links.
 */
void gs_push_watch(gs_t *gs, rt_desk_id_t desk, const Croupier__ServerMessage *msg);
void gs_watch_link(gs_t *gs, rt_desk_id_t desk, uint64_t link_id, bool on);
/* Records that player sits at desk (routing of leave/action/resume); desk 0 unseats. Any
 * thread; takes effect in order with the desk's other gs calls. */
void gs_seat(gs_t *gs, uint64_t player_id, rt_desk_id_t desk);
/* The player left desk: unseats him unless he sits at another desk by now (a tournament player
 * seated at his new table of this server before his old table let him go). Any thread; in order
 * with the desk's other gs calls. */
void gs_unseat(gs_t *gs, uint64_t player_id, rt_desk_id_t desk);
/* The desk closes its seats (drain, or the table shut): each player is told with a
 * TableClosing push, and the gateways get a DeskClosing notice naming them so they re-seat them
 * elsewhere. The players stay seated here until they leave (or the process exits), so a resume
 * or a leave still reaches the desk meanwhile; the desk starts no round. Any thread. */
void gs_close_desk_seats(gs_t *gs, rt_desk_id_t desk, const uint64_t *players, size_t n,
                         Croupier__ClosingReason reason, const char *detail);

/* The desk's table moves as a whole (docs/protocol.md "Whole-table moves"): each gateway of the
 * players gets a DeskClosing{CLOSING_DRAINING, offer_id} naming them, and asks a ready server
 * to adopt the table. No TableClosing is pushed: the players next get Moved and the Snapshot
 * of the adopted table. Any thread. */
void gs_move_desk_seats(gs_t *gs, rt_desk_id_t desk, const uint64_t *players, size_t n,
                        const char *offer_id);
/* Answers an Adopt that lost the race: another server (server_id, "<service>:<slot>") adopted
 * the table; the gateway sends it there. Any thread. */
void gs_reply_adopted_by(gs_t *gs, gs_request_t *req, const char *server_id);

/* ---- money ---- */
struct money_writer;
/* Gives the gs the process's settlement writer (not owned). Main thread, before desks run. */
void gs_set_money(gs_t *gs, struct money_writer *w);
struct money_writer *gs_money(gs_t *gs);
/*
 * Money follow-ups: an operation whose result a desk must still act on (a buy-in whose escrow
 * goes back when the table closed meanwhile, a debit that seats chips). Call
 * gs_money_followup_begin() before submitting it; the writer callback sets res->arg = gs and
 * posts the result to the desk with free_fn = gs_money_result_free, which ends the follow-up
 * once the desk has handled the message (any money it submits then is queued first) or the
 * message was dropped. The exit's flush waits until no follow-up is left, so a result that
 * arrives during the flush cannot leave chips behind. Any thread.
 */
void gs_money_followup_begin(gs_t *gs);
/* Ends one without a result (the submission was refused before it was queued). */
void gs_money_followup_end(gs_t *gs);
void gs_money_result_free(void *money_result);
uint64_t gs_money_followups(const gs_t *gs);
/* The server slot and fencing epoch rounds are played under (0 before the lease is held). */
uint32_t gs_server_slot(const gs_t *gs);
uint64_t gs_epoch(const gs_t *gs);
/*
 * The round id (money.h: service:slot:epoch:desk:seq) of round seq of desk under the server's
 * identity now. Engines take it again when they settle a round, so that a round (or a table) that
 * outlived a lease regain (lease.h REGAINED: the same slot, a new epoch, nobody else held it in
 * between) settles under the epoch the fence holds now instead of being refused as stale. Any
 * thread.
 */
money_round_id_t gs_round_id(const gs_t *gs, uint64_t desk, uint64_t seq);
/* Whether a desk may start a round now: intake open, the settlement queue below its high
 * watermark (a round is never started when its settlement could not be queued promptly) and the
 * deck generator healthy (common/deck.h: after a generator failure no round starts, ever). */
bool gs_can_start_round(const gs_t *gs);
/* Whether the Redis Sentinels can fail the master over (croupier-game watches SENTINEL
 * CKQUORUM with --redis-sentinels): without a quorum no round starts, since a master lost then
 * would not be replaced (docs/deploy.md "The failure model"). Default true. Any thread. */
void gs_set_redis_quorum(gs_t *gs, bool ok);
/* Whether Redis may lose data silently (its maxmemory-policy evicts: common/rguard.h): while
 * true no round starts (docs/deploy.md "Redis must not evict"). Default false. Any thread. */
void gs_set_redis_unsafe(gs_t *gs, bool unsafe);
/*
 * Self-fencing (docs/queues.md "A server cut off from Redis"). gs_set_fenced(true), on the main
 * thread, takes effect at once for everything that reaches the gs afterwards: joins and adopts
 * are answered DRAINING, actions NO_ROUND (checked again on the desk's thread, so one queued
 * before is refused too, after the desk's on_fence: its TableClosing goes out first), no round
 * starts; then every desk gets on_fence (once more is harmless). gs_set_fenced(false)
 * (the lease confirmed again under the same epoch) lets new joins in; closed tables stay
 * closed. gs_fenced() may be read from any thread.
 */
void gs_set_fenced(gs_t *gs, bool fenced);
bool gs_fenced(const gs_t *gs);

/* Rounds ended, by game and outcome: game_rounds_total{game,outcome}. Any thread. */
void gs_count_round(gs_t *gs, const char *game, rt_outcome_t outcome);

#endif
