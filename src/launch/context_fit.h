// Whether a server gives an agent enough context per request (issue #36): an agent whose first
// request does not fit fails its first turn ("the request is ~18709 tokens (limit 8191)"), so
// `launch` judges the server's context against the agent's need (agent_def's first_request
// and min_context) before the agent starts, and says what fixes it. Pure; any thread.
#pragma once

#include <string>

#include "launch/launch_agents.h"
#include "launch/launch_server.h"

namespace sf::launch {

/** How a server's context per request fits an agent. */
enum class context_fit {
    fits,      // at least the agent's minimum, or the agent has none
    unknown,   // the server does not say its context: nothing is judged
    tight,     // below the minimum only because the model was trained for less; the first
               // request fits: the agent runs, told that a long session may run out
    too_small  // the agent would fail (soon): launch refuses to start it
};

/** The judgement and, unless it fits, the sentence that says so (no trailing newline). */
struct context_verdict {
    context_fit fit = context_fit::fits;
    std::string message;
};

/**
 * Judges `server`'s context per request (context_length; trained_context when known) for
 * agent `a` on host:port. `started_here`: launch started that server itself (with the agent's
 * --ctx-size), so only the model can be too short. A too_small message names the numbers and
 * the fix: `superfluid serve --ctx-size N` for a server started smaller than its model allows,
 * a model with a longer context otherwise.
 */
context_verdict judge_context(const agent_def &a, const server_probe &server,
                              const std::string &host, int port, bool started_here);

/** `n` with thousands separators: 32768 → "32,768". */
std::string with_commas(long long n);

}  // namespace sf::launch
