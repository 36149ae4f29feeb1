/* libFuzzer driver: ServerMessage frames (see fuzz_frame_common.h). Corpus:
 * fuzz/corpus/server_frame. */
#define FUZZ_TYPE Croupier__ServerMessage
#define FUZZ_NAME server
#include "fuzz_frame_common.h"
