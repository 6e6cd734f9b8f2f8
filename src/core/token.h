// The token id both sides of the worker protocol speak. Plain data: no I/O, no JSON, no gRPC.
#pragma once

#include <cstdint>

namespace sf {

/** A vocabulary id (llama.cpp's llama_token). */
using token_id = int32_t;

}  // namespace sf
