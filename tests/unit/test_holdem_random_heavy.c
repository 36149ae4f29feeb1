/*
 * Heavy version of the hold'em table's random-play test: 1,000,000 random hands with every
 * invariant of test_holdem_table.c checked (chips conserved, no negative stack, betting rules
 * never violated, injected illegal actions refused with the table unchanged), and 50,000
 * random tournaments on one table (positions by the big-blind-forward rule); the quick cases
 * of that file run again alongside.
 */
#define HOLDEM_RANDOM_HANDS 1000000
#define HOLDEM_TOURNAMENTS 50000
#include "test_holdem_table.c"
