/*
 * room -- the record of a private room (房卡) in Redis: its code, rules, where it is played and
 * its scoreboard (docs/protocol.md "Private rooms", docs/architecture.md §12).
 *
 * Key:
 *
 *   STRING {croupier:rooms}:room:<code>   the record as JSON (room_record_json), PX its expiry
 *   STRING {r:<code>}:room                 the same, by entity (room_set_entity): in the code's
 *                                          own slot of a Redis Cluster
 *
 * The code (6 digits) is unique across every server: the record is created with SET NX, and a
 * taken code is drawn again. The table holding the room (the table kit, engine/tk.h) owns the
 * record and rewrites it whole at every change -- a seat taken, a deal played, its end, its
 * adoption by another server -- through room_sync_write(), which refuses a writer that is not
 * the record's owner (an old server after the room moved): only the adoption (take) changes the
 * owner, and it is fenced by the table handoff itself (money.h "Table handoff"). The gateway
 * reads the record to route JoinRoom to the server it names and to answer GetRoom; after the
 * room ended the record stays readable until it expires (--<engine>-room-keep-ms).
 *
 * Threads: none of its own. The room_sync_* calls block (a redisContext of the kit's jobs
 * thread, money/jobs.h); the rest is pure.
 */
#ifndef CROUPIER_ROOM_H
#define CROUPIER_ROOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "client.pb-c.h"
#include "rcluster.h"

/* On a single Redis or Sentinel; on a Redis Cluster room_key() puts the records under
 * "{croupier:money}:rooms:room:" (common/keytag.h). */
#define ROOM_KEY_PREFIX "{croupier:rooms}:room:"
#define ROOM_CODE_LEN 6
#define ROOM_MAX_DEALS 64
#define ROOM_MAX_SEATS 9
#define ROOM_MAX_OPTIONS 8
#define ROOM_OPTION_MAX 32
#define ROOM_GAME_MAX 32
#define ROOM_ID_MAX 160 /* a server id, an owner, a round id */
#define ROOM_DETAIL_MAX 160

typedef struct {
    int seat;
    uint64_t player;
    int64_t total;
} room_score_t;

typedef struct room_record {
    char code[ROOM_CODE_LEN + 1];
    Croupier__RoomState state;
    int engine; /* the protocol's Engine number */
    char game[ROOM_GAME_MAX + 1];
    int64_t stake;
    int seats, deals, played;
    uint64_t host;
    bool bot_fill;
    bool no_spectators; /* RoomRules.no_spectators: the room may not be watched */
    int noptions;
    char options[ROOM_MAX_OPTIONS][ROOM_OPTION_MAX + 1];
    /* Where it is played: the registry id of its server, that server's lease epoch and the
     * table's desk; owner names the writer ("<server>/<epoch>/<desk hex>"). */
    char server[ROOM_ID_MAX + 1];
    uint64_t epoch, desk;
    char owner[ROOM_ID_MAX + 1];
    int64_t created_ms, expires_ms; /* unix ms */
    int nscores;
    room_score_t scores[ROOM_MAX_SEATS];
    char rounds[ROOM_MAX_DEALS][ROOM_ID_MAX + 1]; /* played rounds' ids, in order */
    char detail[ROOM_DETAIL_MAX + 1];             /* why it ended early */
} room_record_t;

/*
 * By entity (croupier-game, croupier-gate and croupier-ctl with --redis-cluster and
 * --money-by-entity; docs/queues.md "Private rooms by entity"): each record under its code's own
 * hash tag, {r:<code>}:room, so that the rooms spread over the masters; every script of a room
 * touches that one key. Set once at start, before any thread (not changed afterwards); off by
 * default.
 */
void room_set_entity(bool on);
bool room_entity(void);

/* The key of a room's record (buf: 64 bytes are enough). */
void room_key(const char *code, char *buf, size_t len);
/* Whether code is 6 digits. */
bool room_code_valid(const char *code);
/* Draws a code: 6 digits, uniform (arc4random). The caller makes it unique, e.g. with SET NX
 * and another draw on a collision (room_sync_create). */
void room_code_draw(char code[ROOM_CODE_LEN + 1]);
/* The same for codes of n digits (1..18; code holds n + 1 bytes): the replays' share codes
 * (docs/replays.md), and room codes with n = ROOM_CODE_LEN. */
void room_code_draw_digits(char *code, int n);
bool room_code_digits_valid(const char *code, int n);
/* The record as JSON text (malloc'd; NULL out of memory), and back: 0, or -EINVAL when the text
 * is no complete record (a missing or out-of-range field). */
char *room_record_json(const room_record_t *r);
int room_record_parse(const char *json, size_t len, room_record_t *out);
/* The owner text of a writer (room_record_t.owner). */
void room_owner(const char *server, uint64_t epoch, uint64_t desk, char *buf, size_t len);
/* The rule options as an engine's option text for game: "game=opt+opt" ("" with none). */
void room_options_text(const room_record_t *r, char *buf, size_t len);

/*
 * A RoomInfo of the record, pointing into buf (which must outlive the message).
 */
typedef struct {
    Croupier__RoomInfo info;
    Croupier__RoomScore score[ROOM_MAX_SEATS];
    Croupier__RoomScore *score_ptr[ROOM_MAX_SEATS];
    char *round_ptr[ROOM_MAX_DEALS];
    char *option_ptr[ROOM_MAX_OPTIONS];
} room_info_buf_t;
void room_info_fill(const room_record_t *r, room_info_buf_t *buf);

/*
 * Blocking calls on a jobs thread's connection.
 *
 * room_sync_create: draws a code (unused: SET NX), writes the record with it (r->code set) to
 * expire in ttl_ms. 0, -EEXIST (no free code after a few draws), -EIO.
 * room_sync_write: rewrites the record to expire in ttl_ms if r->owner owns it -- or, take, as
 * its new owner (an adoption). 1 written, 0 the record is gone (expired), -EPERM another owns
 * it, -EIO.
 */
int room_sync_create(redisContext *c, room_record_t *r, int64_t ttl_ms);
int room_sync_write(redisContext *c, const room_record_t *r, int64_t ttl_ms, bool take);
/* The same by entity, on a cluster client (each key routed to its slot's master). script is
 * room_cluster_script()'s (the caller's, freed with rcluster_script_destroy; used by the thread
 * of c only, as common/rcluster.h asks). Same returns. */
rcluster_script_t *room_cluster_script(void);
int room_cluster_create(rcluster_t *c, room_record_t *r, int64_t ttl_ms);
int room_cluster_write(rcluster_t *c, rcluster_script_t *script, const room_record_t *r,
                       int64_t ttl_ms, bool take);

#endif
