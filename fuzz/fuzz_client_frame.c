/* libFuzzer driver: ClientMessage frames (see fuzz_frame_common.h). Corpus:
 * fuzz/corpus/client_frame. */
#define FUZZ_TYPE Croupier__ClientMessage
#define FUZZ_NAME client
#include "fuzz_frame_common.h"
