/*
 * testgame -- the "test" engine (see testgame.c): a minimal resident-table game on the table kit
 * (tk.h) that exists to prove the game-server lifecycle. It announces itself to gateways as a
 * traditional engine serving the game "test".
 */
#ifndef CROUPIER_TESTGAME_H
#define CROUPIER_TESTGAME_H

#include "gs.h"

extern const engine_ops_t test_engine_ops;

#endif
