// The journal's encoding of a placement (worker_submission): the worker protocol's
// GenerateRequest bytes, so a journal written by an earlier build reads back. This header
// speaks core types only, so the session layer can journal requests without seeing gRPC.
#pragma once

#include <string>
#include <string_view>

#include "core/generate_request.h"

namespace sf::protocol {

/** The submission as bytes (resume tokens included when set). */
std::string encode_submission(const worker_submission &s);
/** Reads bytes written by encode_submission; false when they are not a GenerateRequest. */
bool decode_submission(std::string_view bytes, worker_submission &out);

}  // namespace sf::protocol
