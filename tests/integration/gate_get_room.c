/*
 * gate_get_room -- a test client for the e2e scripts: logs in to a croupier-gate as a player
 * (a token minted with the deployment's secret) and asks GetRoom{code}; prints the answer on one
 * line, "room CODE state S played N" (S the RoomState number) or "error CODE", and exits 0 on a
 * RoomInfo, 1 on an error answer, 2 on bad arguments or no answer.
 *
 *   gate_get_room HOST PORT SECRET_FILE PLAYER CODE
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gatec.h"
#include "token.h"

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: gate_get_room HOST PORT SECRET_FILE PLAYER CODE\n");
        return 2;
    }
    token_secret_t secret;
    if (token_secret_load(argv[3], &secret) != 0) {
        fprintf(stderr, "gate_get_room: cannot load the secret %s\n", argv[3]);
        return 2;
    }
    char tok[TOKEN_MAX_LEN + 1];
    if (token_mint(&secret, strtoull(argv[4], NULL, 10), (int64_t)time(NULL) + 600, tok,
                   sizeof tok) < 0) {
        fprintf(stderr, "gate_get_room: bad player %s\n", argv[4]);
        return 2;
    }
    gatec_t *c = gatec_connect(argv[1], atoi(argv[2]), 3000);
    if (c == NULL)
        return 2;
    int rc = 2;
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 5000);
    if (m == NULL || gatec_code(m) != 0) {
        fprintf(stderr, "gate_get_room: login refused\n");
        goto done;
    }
    frame_free_server(m);
    Croupier__ClientMessage q = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__GetRoom g = CROUPIER__GET_ROOM__INIT;
    g.code = argv[5];
    q.request_id = 2;
    q.body_case = CROUPIER__CLIENT_MESSAGE__BODY_GET_ROOM;
    q.get_room = &g;
    if (gatec_send(c, &q) != 0)
        goto done;
    m = gatec_wait_reply(c, 2, 5000);
    if (m == NULL) {
        fprintf(stderr, "gate_get_room: no answer\n");
        goto done;
    }
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROOM && m->room != NULL) {
        printf("room %s state %d played %" PRIu32 "\n", m->room->code, (int)m->room->state,
               m->room->deals_played);
        rc = 0;
    } else {
        printf("error %d\n", gatec_code(m));
        rc = 1;
    }
done:
    frame_free_server(m);
    gatec_close(c);
    return rc;
}
