/*
 * keytag -- the hash tags of the key families that a Redis script reads together with a lease's
 * fence, by deployment (docs/deploy.md "Redis Cluster: the client", "Key layout on a cluster").
 *
 * On a single Redis or with Sentinel each family keeps its own tag, as ever:
 *   lease `{croupier:lease:<service>}`, registry `{croupier:registry}`, rooms `{croupier:rooms}`,
 *   hand histories `{croupier:history:<game>}`.
 * On a Redis Cluster every key of one script must hash to one slot, and the money scripts read
 * the fence (a lease key) beside the money keys, the registry's beside the registry keys, the
 * hand history's beside the stream. So a process given --redis-cluster calls
 * keytag_set_cluster(true) once at start, before any thread, and these families then live in the
 * money slot: `{croupier:money}:lease:<service>`, `{croupier:money}:registry`,
 * `{croupier:money}:rooms`, `{croupier:money}:history:<game>`.
 *
 * The tournaments too (docs/tournaments.md "On a Redis Cluster"): the director's scripts take a
 * buy-in out of a wallet into the prize pool `{croupier:money}:tourpool:<id>` and the fee into
 * the house's `{croupier:money}:rake:tournament`, pay prizes back to wallets, append hand
 * histories and item prizes, all behind the tournament's fence; the hall script reads the index
 * `{croupier:tours}` beside the tournaments it opens. So on a cluster a tournament's keys are
 * `{croupier:money}:tour:<id>:<what>`, the index `{croupier:money}:tours:<what>`, the item
 * prizes `{croupier:money}:items:player:<player>` (else `{croupier:tour:<id>}:<what>`,
 * `{croupier:tours}:<what>`, `{croupier:items}:player:<player>`). The trade-off: every
 * tournament's load lands on the money slot's master, like the money itself; a slot per
 * tournament with its money moved by money/xfer.h transfers would spread it, at the price of a
 * two-step buy-in and payout (designed in docs/tournaments.md "Tournaments by entity", its money
 * layer money/mtour.h).
 *
 * With the money by entity (--redis-cluster ... --money-by-entity, issue 34) a tournament's own
 * keys leave the money slot for a slot of their own, beside its pool: keytag_tour() gives
 * `{t:<id>}` (docs/tournaments.md "Tournaments by entity"), the tag of money/mtour.h. Every
 * process that reads a tournament's keys (the director, the gateway's tour client and replays,
 * the game server's tournament tables, croupier-ctl tour) calls keytag_set_tour_entity(true)
 * once at start in that mode, after keytag_set_cluster(true). The index, the halls and the item
 * prizes stay in the money slot.
 *
 * The other families (seats, gateways, lobby, replays) keep their own slots. Spreading the money
 * and these families over slots by entity is the next step of issue 34 (docs/queues.md, "Redis
 * Cluster: keys by entity and transfers between slots").
 */
#ifndef CROUPIER_KEYTAG_H
#define CROUPIER_KEYTAG_H

#include <stdbool.h>
#include <stddef.h>

/* Once at start, before any thread runs (not changed afterwards). */
void keytag_set_cluster(bool on);
bool keytag_cluster(void);

/* The lease keys' base (no trailing ':'): "{croupier:lease:S}" or "{croupier:money}:lease:S".
 * Returns buf ("" when it does not fit). */
const char *keytag_lease(char *buf, size_t len, const char *service);
/* The hand history keys' base: "{croupier:history:G}" or "{croupier:money}:history:G". */
const char *keytag_history(char *buf, size_t len, const char *game);
/* "{croupier:registry}" or "{croupier:money}:registry" (static). */
const char *keytag_registry(void);
/* "{croupier:rooms}" or "{croupier:money}:rooms" (static). */
const char *keytag_rooms(void);

/* Once at start, before any thread, after keytag_set_cluster(true): a tournament's keys by
 * entity, "{t:ID}" (only on a cluster: off one it changes nothing). */
void keytag_set_tour_entity(bool on);
bool keytag_tour_entity(void); /* on a cluster and set */

/* A tournament's keys' base: "{croupier:tour:ID}", "{croupier:money}:tour:ID" on a cluster, or
 * "{t:ID}" by entity (id: its decimal text). Returns buf ("" when it does not fit). */
const char *keytag_tour(char *buf, size_t len, const char *id);
/* The tournaments' index base: "{croupier:tours}" or "{croupier:money}:tours" (static). */
const char *keytag_tours(void);
/* The item prizes' base: "{croupier:items}" or "{croupier:money}:items" (static). */
const char *keytag_items(void);

#endif
