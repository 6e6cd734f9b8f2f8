// One embedding input as every layer sees it (API parsing, worker, llama_embedder).
#pragma once

#include <string>
#include <vector>

#include "core/token.h"

namespace sf {

/** Text (tokenized by the worker) or token ids used as given. */
struct embed_input {
    bool is_text = true;
    std::string text;
    std::vector<token_id> tokens;

    bool operator==(const embed_input &) const = default;
};

}  // namespace sf
