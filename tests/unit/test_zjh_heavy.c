/*
 * Heavy version of the Zha Jin Hua random-play test: 1,000,000 random hands with every
 * invariant of test_zjh.c checked (chips conserved, no negative stack, every accepted action
 * checked against the rules, injected illegal inputs refused with the table unchanged, every
 * hand ends); the quick cases of that file run again alongside.
 */
#define ZJH_RANDOM_HANDS 1000000
#include "test_zjh.c"
