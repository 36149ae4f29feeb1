/* libFuzzer driver: RpcFrame frames (see fuzz_frame_common.h). Corpus: fuzz/corpus/rpc_frame. */
#define FUZZ_TYPE Croupier__RpcFrame
#define FUZZ_NAME rpc
#define FUZZ_SCAN 1 /* also checks frame_scan_rpc against the decoder */
#include "fuzz_frame_common.h"
