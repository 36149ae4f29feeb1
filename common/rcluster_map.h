/*
 * rcluster_map -- what the blocking (rcluster.h) and the asynchronous (rcluster_async.h) Redis
 * Cluster clients share: the slot map read from `CLUSTER SLOTS`, its uncovered ranges, the
 * parsing of `-MOVED` / `-ASK`, and the script type. Internal to common/: the public faces are
 * rcluster.h and rcluster_async.h (docs/deploy.md, "Redis Cluster: the client").
 */
#ifndef CROUPIER_RCLUSTER_MAP_H
#define CROUPIER_RCLUSTER_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "config.h"
#include "rcluster.h"

/* The slot table's "no master" */
#define RCLUSTER_NONE 0xFFFFu

/* A slot map as read from one node: slot -> index in nodes (RCLUSTER_NONE: uncovered). The
 * nodes are the masters, then (master false) the replicas, in the order the answer gave them. */
typedef struct {
    uint16_t slot[RCLUSTER_SLOTS];
    config_addr_t nodes[RCLUSTER_MAX_NODES];
    bool master[RCLUSTER_MAX_NODES];
    size_t n;
} rcluster_map_t;

/*
 * Parses a CLUSTER SLOTS reply into m: each entry is [start, end, master, replica...], each node
 * [ip, port, id, ...]; an empty or "?" ip is the node asked (asked_host). Returns 0, or -1 with
 * the reason in why (a malformed answer: bad ranges, bad addresses, too many nodes).
 */
int rcluster_map_parse(const redisReply *r, const char *asked_host, rcluster_map_t *m, char *why,
                       size_t whylen);

/* Describes the uncovered slots of a slot table ("slots not served by any master: a-b c (N in
 * all)", at most four ranges named) into buf; returns their number (0: all covered). */
unsigned rcluster_map_gaps(const uint16_t *slot, char *buf, size_t len);

/* Parses "MOVED 3999 127.0.0.1:6381" / "ASK ..." (an IPv6 endpoint unbracketed or bracketed):
 * 0 with the slot and the address, or -1. */
int rcluster_redirect_parse(const char *msg, unsigned *slot, config_addr_t *to);

/* Whether reply is an error reply whose first word is word ("MOVED", "NOSCRIPT" ...). */
bool rcluster_reply_is(const redisReply *r, const char *word);

struct rcluster_script {
    char *src;
    char sha[41]; /* learned with SCRIPT LOAD */
    bool have_sha;
};

#endif
