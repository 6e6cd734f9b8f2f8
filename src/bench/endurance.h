// Scenario `endurance` (issue #23): one orchestrator agent's trajectory — a fixed system prompt
// with a tools list, then N turns, each a forced tool call (tool_choice "required") whose
// arguments are checked against the tool's JSON schema, answered by a tool result of a few
// hundred tokens, so the conversation grows turn by turn. One trajectory runs in one thread;
// `run_endurance` (scenario_endurance.cpp) runs several at once and sums them up.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/http_client.h"

namespace sf::bench {

/** The sizes of a trajectory (bench options --turns, --start-tokens, …). */
struct trajectory_spec {
    int agent        = 0;      // which trajectory: seeds its task and tool results
    int turns        = 80;     // tool calls
    int start_tokens = 10000;  // about the context of the first turn (system + task)
    int system_bytes = 7000;   // the shared system prompt's bytes (tools list aside)
    int result_min   = 300;    // tokens of a tool result, drawn in [min, max] per turn
    int result_max   = 600;
    int call_tokens  = 256;  // max_tokens of a turn (a call's arguments fit: schemas bound them)
    int interrupt_at = 0;    // turn whose answer the client drops after 2 token events (0: none)
    double timeout_s = 900;
};

/** One turn's figures. Token counts are the server's usage report (-1: not reported). */
struct turn_record {
    double ttft_s         = -1;
    double total_s        = 0;
    int prompt_tokens     = -1;
    int cached_tokens     = -1;
    int completion_tokens = -1;
    std::string tool;  // the called tool's name
    std::string finish_reason;
    bool valid     = false;  // one call of a known tool whose arguments match its schema
    bool malformed = false;  // a call whose arguments are not JSON or break the schema
    bool truncated = false;  // no call, or cut by max_tokens (finish_reason "length")
    bool error     = false;  // the request failed (HTTP error, transport, in-band error)
    std::string error_text;

    /** Prompt tokens the server computed (prompt − cached); -1 when either is unknown. */
    int prefilled() const {
        return prompt_tokens >= 0 && cached_tokens >= 0 ? prompt_tokens - cached_tokens
               : prompt_tokens >= 0                     ? prompt_tokens
                                                        : -1;
    }
};

/** What the interruption cost: one record for the interrupted turn. */
struct interruption_record {
    bool happened          = false;
    bool reattached        = false;  // resumed from the server's journal (Superfluid)
    int tokens_before_cut  = 0;      // token events the client had when it dropped
    int prefill_recomputed = 0;      // prompt tokens computed again to resume
    int decode_recomputed  = 0;      // answer tokens generated again to resume
    double resume_s        = 0;      // drop → the resumed answer complete
    bool consistent        = false;  // the resumed answer starts with what the client had
};

/** A whole trajectory: its turns in order, the interruption, wall time. */
struct trajectory_record {
    std::vector<turn_record> turns;
    interruption_record interruption;
    double wall_s = 0;
};

/** The tools every request offers (OpenAI `tools`): read_file, run_command, search. */
const nlohmann::json &endurance_tools();

/**
 * Checks `arguments` (a JSON text) against the schema of `tool` in endurance_tools(): the
 * subset those schemas use (object, required, additionalProperties false, string maxLength in
 * code points, integer minimum/maximum). Returns "" when valid, else what is wrong.
 */
std::string check_tool_call(const std::string &tool, const std::string &arguments);

/** Runs one trajectory against `base_url` (an OpenAI-compatible server). */
trajectory_record run_trajectory(const std::string &base_url, const trajectory_spec &spec);

}  // namespace sf::bench
