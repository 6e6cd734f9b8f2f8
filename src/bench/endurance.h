// Scenario `endurance` (issue #23): one orchestrator agent's trajectory — a fixed system prompt
// with a tools list, then N turns, each a forced tool call (any tool, every 4th turn a named
// one) whose arguments are checked against the tool's JSON schema, answered by a tool result of
// a few hundred tokens, so the conversation grows turn by turn; in any of four APIs
// (endurance_api.h). One trajectory runs in one thread; `run_endurance`
// (scenario_endurance.cpp) runs several at once and sums them up.
#pragma once

#include <functional>
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
    std::string api  = "openai";  // openai | anthropic | responses | ollama (endurance_api.h)
    std::string kill;             // process killed at the interruption: "worker", "head" or ""
    /**
     * Called once the client has dropped the interrupted answer: kills `kill` (restarting what
     * must be restarted) and waits for the service. Returns "" or what failed.
     */
    std::function<std::string()> on_cut;
    /**
     * Called once the interrupted turn is resumed: prompt tokens the server prefilled since the
     * kill, by its own counters (-1: unknown).
     */
    std::function<int()> server_prefilled;
    /**
     * A turn whose stream broke (another trajectory's kill: the head, or llama-server) is
     * resumed once /health answers 200 again: re-attached, or sent again.
     */
    bool resume_broken = false;
};

/** One turn's figures. Token counts are the server's usage report (-1: not reported). */
struct turn_record {
    double ttft_s         = -1;
    double total_s        = 0;
    int prompt_tokens     = -1;
    int cached_tokens     = -1;
    int completion_tokens = -1;
    int prefilled_tokens  = -1;  // reported as such (Ollama's prompt_eval_count)
    std::string named;           // the tool tool_choice named ("": any tool)
    std::string tool;            // the called tool's name
    std::string finish_reason;
    bool valid     = false;  // one call of a known tool whose arguments match its schema
    bool malformed = false;  // a call whose arguments are not JSON or break the schema
    bool truncated = false;  // no call, or cut by max_tokens (finish_reason "length")
    bool error     = false;  // the request failed (HTTP error, transport, in-band error)
    std::string error_text;

    /** Prompt tokens the server computed (prompt − cached, or as reported); -1: unknown. */
    int prefilled() const {
        return prefilled_tokens >= 0                      ? prefilled_tokens
               : prompt_tokens >= 0 && cached_tokens >= 0 ? prompt_tokens - cached_tokens
               : prompt_tokens >= 0                       ? prompt_tokens
                                                          : -1;
    }
};

/** What the interruption cost: one record for the interrupted turn. */
struct interruption_record {
    bool happened   = false;
    bool reattached = false;         // resumed from the server's journal (Superfluid)
    std::string killed;              // the process killed after the drop ("" none)
    std::string kill_error;          // what failed in the kill or restart
    int tokens_before_cut  = 0;      // token events the client had when it dropped
    int tokens_lost        = 0;      // of those, not kept by the resumed answer
    int tokens_duplicated  = 0;      // of those, generated and delivered again (a re-send)
    int prefill_recomputed = 0;      // prompt tokens computed again for a re-sent request
    int decode_recomputed  = 0;      // answer tokens generated again for a re-sent request
    int server_prefilled   = -1;     // prompt tokens the server prefilled since a kill (-1: n/a)
    double resume_s        = 0;      // drop → the resumed answer complete
    bool consistent        = false;  // the resumed answer starts with what the client had
};

/** A whole trajectory: its turns in order, the interruption, wall time. */
struct trajectory_record {
    std::vector<turn_record> turns;
    interruption_record interruption;
    std::vector<interruption_record> broken;  // turns broken by a kill and resumed
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

/** Runs one trajectory against `base_url` in `spec.api`. */
trajectory_record run_trajectory(const std::string &base_url, const trajectory_spec &spec);

}  // namespace sf::bench
