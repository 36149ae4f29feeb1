/*
 * gate_seat -- the seat records the gateways keep in Redis (docs/gateway.md "Seats"), and the
 * rule that says when a seat went with its server.
 *
 * A record `{croupier:seat}:<player>` is one line of seven space-separated fields, and an eighth,
 * a marker: the word `room` when the seat is at a private room's table (docs/protocol.md "Private
 * rooms"), the word `tour` when it is at a tournament table (docs/protocol.md "Tournaments"):
 *
 *   <server id> <address> <desk> <engine> <stake> <game> <epoch> [room|tour]
 *
 * Neither kind of seat is ever re-seated at a cash table by the gateway: a room's players are
 * told their room is over, a tournament player is told to ask for his table again
 * (TakeTournamentSeat), which the director's state names.
 *
 * epoch is the lease epoch (lease/lease.h: a fencing number every acquisition of a slot takes
 * anew) of the server process that seated the player, as the gateway knew it when it wrote the
 * record. Records written before the epoch was kept have six fields; they parse with epoch 0
 * ("not known") and are judged by the server's presence in the registry alone.
 *
 * Staleness (gate_seat_judge): a seat lives as long as the process that holds it. A process
 * holds one lease slot (one server id) for its whole life and exits when it loses it, so a seat
 * is gone when the gateway has proof that its process is no more:
 *
 *   * the rpc link to the seat's address is ready and its hello named another server id (a new
 *     process listens there), or the same id under an epoch larger than the seat's, from a
 *     process that was not already serving at the seat's epoch (a replacement took the slot);
 *   * without such a live link: the registry view (read in full at least once) does not list
 *     the server, lists it under a larger epoch than the seat's (the slot was taken again), or
 *     at another address; or a direct read of the server's registry entry, made since the link
 *     was lost, found it absent, under a larger epoch, or at another address.
 *
 * A live link is proof that the process lives: its seats are never judged gone from the
 * registry alone (an entry deleted while the process finishes its exit, a Redis hiccup; a
 * process that regained its slot under a new epoch after Redis lost its lease key keeps its
 * tables, and the link that stayed up through it proves it: `link_floor`). A lost link with a
 * live registry entry (a network blip, a server restarting its listener) proves nothing either:
 * such seats live and their requests are retried within their budgets.
 */
#ifndef CROUPIER_GATE_SEAT_H
#define CROUPIER_GATE_SEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest record gate_seat_format() writes (without the NUL). */
#define GATE_SEAT_RECORD_MAX 320

typedef struct gate_seat {
    char server_id[80];
    char address[72];
    uint64_t desk;
    int engine;
    int64_t stake;
    char game[48];
    int64_t epoch; /* the server's lease epoch when the seat was taken; 0 = not known */
    bool room;     /* a private room's seat: never re-seated at another table after a crash */
    bool tour;     /* a tournament table's seat: never re-seated by the gateway (the director
                      seats the player; TakeTournamentSeat finds his table again) */
} gate_seat_t;

/* Writes s as a record into buf (NUL-terminated). Returns its length, or -ENOSPC when cap is too
 * small (buf then holds no record) or -EINVAL for a field that would break the format (empty or
 * holding a space) or a seat marked both room and tour. */
int gate_seat_format(const gate_seat_t *s, char *buf, size_t cap);
/* Parses a record of six, seven or eight fields (text need not be NUL-terminated). Returns 0,
 * or -EINVAL (s zeroed) for anything else: fewer fields, a number that does not parse, a
 * negative epoch, an eighth field other than `room` or `tour`, text after it, a record longer than
 * GATE_SEAT_RECORD_MAX. */
int gate_seat_parse(const char *text, size_t len, gate_seat_t *s);

/*
 * What the gateway knows, at one moment, of the server a seat names. Strings are borrowed (NULL
 * when the matching flag is false).
 */
typedef struct gate_seat_facts {
    bool view_read;             /* the registry view was read in full at least once */
    bool listed;                /* the view lists the seat's server id ... */
    int64_t listed_epoch;       /* ... under this epoch */
    const char *listed_address; /* ... at this address */
    /* The rpc link to the seat's address. */
    bool link_ready;            /* ready (hello answered) */
    const char *link_server_id; /* the server id its hello named (link_ready) */
    int64_t link_floor;         /* lowest epoch known to belong to the process behind it; 0 =
                                   not known */
    /* A direct read of the registry entry, made since the link to the seat's address was lost. */
    bool probed;
    bool probed_absent;   /* no entry */
    int64_t probed_epoch; /* else: its epoch and address */
    const char *probed_address;
} gate_seat_facts_t;

typedef enum {
    GATE_SEAT_LIVE = 0,
    GATE_SEAT_GONE_UNLISTED,    /* no registry entry (expired or deleted) and no live link */
    GATE_SEAT_GONE_REPLACED,    /* the slot was taken again: a larger epoch, or its entry or
                                   link names another address or process */
    GATE_SEAT_GONE_NEW_PROCESS, /* the live link's process started after the seat was taken */
} gate_seat_verdict_t;

/* The staleness rule above. Pure: the same facts always give the same verdict. */
gate_seat_verdict_t gate_seat_judge(const gate_seat_t *s, const gate_seat_facts_t *f);
/* "live", "unlisted", "replaced", "new_process" (logs and metrics). */
const char *gate_seat_verdict_name(gate_seat_verdict_t v);

#endif
