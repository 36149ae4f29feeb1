/*
 * gate_tour_int.h -- what gate_tour.c (the tournament requests) and gate_tour_events.c (the
 * director's events as pushes) share: one tournament operation of the gateway, alive until its
 * answer is made and its last Redis callback has run (gate_tour.c's header comment).
 */
#ifndef CROUPIER_GATE_TOUR_INT_H
#define CROUPIER_GATE_TOUR_INT_H

#include "gate_int.h"

typedef enum {
    TOP_LIST,
    TOP_GET,
    TOP_REGISTER,
    TOP_UNREGISTER,
    TOP_LEVEL, /* a LEVEL_UP push waiting for the structure's blinds */
    TOP_TAKE,  /* TakeTournamentSeat: the entry, then where its table is played */
} gate_tour_kind_t;

/* One tournament of a list being built. */
typedef struct {
    uint64_t id;
    int64_t created;
    bool ok;
    tour_client_meta_t meta;
} gate_tour_row_t;

typedef struct gate_tour_op {
    struct gate_tour_op *next, *prev;
    gate_t *g;
    gate_tour_kind_t kind;
    uint64_t conn_id, session, rid, player, tournament;
    char id[TOUR_CLIENT_ID_TEXT];
    int pending;         /* Redis callbacks still to run */
    bool done;           /* answered, or nobody is left to answer */
    bool counted;        /* counted in the connection's requests in flight */
    bool followed;       /* register: the connection followed the tournament before it */
    struct event *timer; /* the deadline */
    struct event *poll;  /* register/unregister: the next LPOP */
    int poll_ms;
    /* register / unregister */
    char req[TOUR_CLIENT_REQ_MAX + 1];
    tour_client_request_t rq;
    /* list */
    int status; /* a Croupier__TournamentStatus filter; 0: any */
    uint32_t limit;
    bool failed;
    long long total;
    gate_tour_row_t *rows;
    size_t nrows, next_row;
    /* get */
    tour_client_meta_t meta;
    bool meta_ok, entry_ok, have_entry;
    tour_client_entry_t entry;
    bool match_ok; /* a match's current stage, read after its meta */
    tour_client_match_t match;
    /* level push */
    tour_client_event_t ev;
    /* take: the meta's status, and the seat record when the connection did not know it */
    tour_status_t tstatus;
    bool status_absent;
    bool seat_asked, seat_ok, seat_nil;
    gate_seat_t seat;
} gate_tour_op_t;

gate_tour_op_t *gate_tour_op_new(gate_t *g, gate_tour_kind_t kind);
void gate_tour_op_free(gate_tour_op_t *op);
/* Whether connection c follows tournament id (its pushes). */
bool gate_tour_follows(const gate_conn_t *c, uint64_t id);

#endif
