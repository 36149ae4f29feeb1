/* libFuzzer driver: RpcFrame frames (see fuzz_frame_common.h). Corpus: fuzz/corpus/rpc_frame. */
#define FUZZ_TYPE Croupier__RpcFrame
#define FUZZ_NAME rpc
#include "fuzz_frame_common.h"
