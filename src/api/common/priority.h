// Where a request's priority class comes from (issue #4), first match wins:
//   1. body `priority`: a class name ("interactive" | "normal" | "batch"), or an integer in
//      vLLM's convention: lower is more urgent (< 0 interactive, 0 normal, > 0 batch).
//      SGLang and TensorRT-LLM use the opposite sign; we follow vLLM.
//   2. body `service_tier` (OpenAI): "priority" → interactive, "flex" → batch; other values
//      ("auto", "default", …) decide nothing.
//   3. header `X-Superfluid-Priority: <class name>`.
//   4. the API key (Authorization: Bearer K, or x-api-key: K; keys are not validated): a key
//      that is a class name, or starts with "sk-<class>-", selects that class — for agents
//      that can set only a key.
//   5. rules from the config file (substring match on the key or the User-Agent).
//   6. the server's --default-priority (default: normal).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/common/api_error.h"
#include "core/session_event.h"

namespace sf {

/** One config rule: when every non-empty matcher is a substring of the request's value. */
struct priority_rule {
    std::string key_contains;
    std::string user_agent_contains;
    priority_class cls = priority_class::NORMAL;
};

struct priority_config {
    priority_class default_class = priority_class::NORMAL;
    std::vector<priority_rule> rules;
};

/** The request headers that can decide a class (values as sent, "" when absent). */
struct priority_headers {
    std::string x_priority;     // X-Superfluid-Priority
    std::string authorization;  // Authorization
    std::string x_api_key;      // x-api-key
    std::string user_agent;     // User-Agent
};

/**
 * Steps 3–6 for a request whose body did not decide (`from_body` empty). Returns false with a
 * 400 in `err` when the header names no class.
 */
bool resolve_priority(const std::optional<priority_class> &from_body, const priority_headers &h,
                      const priority_config &cfg, priority_class &out, api_error &err);

/**
 * The API key a request carries: `Authorization: Bearer K`, else `x-api-key`, else a bare
 * Authorization value. The one reading of a key: authentication (http/key_check.h), the
 * priority class, the client identity and session ownership all use it, so with both headers
 * present they agree on which key it is (issue #39: two readings preferred different headers).
 */
std::string api_key(const priority_headers &h);

/**
 * Reads `priority_rules` from a JSON config file:
 * {"default_priority": "normal", "priority_rules": [{"key": "…", "user_agent": "…", "class":
 * "batch"}]}. Returns "" on success, else the error.
 */
std::string load_priority_config(const std::string &path, priority_config &cfg);

/**
 * The same from the file's text; `name` (the path) prefixes the error. Any bytes are safe: a
 * malformed file is an error string, never an exception (tests/fuzz/fuzz_config.cpp).
 */
std::string parse_priority_config(const std::string &text, const std::string &name,
                                  priority_config &cfg);

}  // namespace sf
