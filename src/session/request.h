// A generation request after API parsing: what every adapter (OpenAI, Anthropic, Ollama)
// produces and the session layer consumes. No JSON here.
#pragma once

#include <string>
#include <vector>

#include "engine/engine.h"
#include "scheduler/types.h"

namespace sf {

struct generate_request {
    bool is_chat = true;
    std::vector<chat_message> messages;  // is_chat
    std::string prompt;                  // !is_chat (text completion)
    sampling_params sampling;
    bool has_seed      = false;  // else the session layer assigns one
    priority_class cls = priority_class::NORMAL;
    std::string model;  // as the client named it (echoed back)
};

}  // namespace sf
