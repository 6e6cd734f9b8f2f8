// A chat turn as the head and the worker both see it: messages, tool calls, the options that
// shape a turn, and how the head parses the answer back. Plain data: no I/O, no JSON, no gRPC.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sf {

/** One tool call of an assistant message (OpenAI shape: arguments are JSON text). */
struct tool_call {
    std::string id;
    std::string name;
    std::string arguments;

    bool operator==(const tool_call &) const = default;
};

/** A chat message after API parsing; `role` is system|user|assistant|tool. */
struct chat_message {
    std::string role;
    std::string content;
    std::string name;
    std::string tool_call_id;
    std::string reasoning_content;
    std::vector<tool_call> tool_calls;

    bool operator==(const chat_message &) const = default;
};

/** A tool the model may call (OpenAI function tool / Anthropic tool). */
struct tool_spec {
    std::string name;
    std::string description;
    std::string parameters;  // JSON Schema of the arguments object, as JSON text

    bool operator==(const tool_spec &) const = default;
};

/** Whether and which tool the model must call. NAMED and REQUIRED are enforced by grammar. */
enum class tool_choice_mode { AUTO, NONE, REQUIRED, NAMED };

/**
 * What shapes a chat turn besides its messages, the same for every API (core chat layer,
 * docs/ARCHITECTURE.md "Chat layer"). The worker turns it, through llama.cpp `common`
 * (common_chat_templates_apply), into the prompt, a grammar and a parser description.
 */
struct chat_options {
    std::vector<tool_spec> tools;
    tool_choice_mode tool_choice = tool_choice_mode::AUTO;
    std::string tool_name;            // NAMED: the tool that must be called (one of `tools`)
    bool parallel_tool_calls = true;  // more than one call in one answer
    std::string json_schema;          // non-empty: the content is JSON valid against it (JSON text)
    int reasoning = -1;               // -1: the template's default, 0: off, 1: on
    std::string reasoning_effort;     // non-empty: template kwarg `reasoning_effort`
    int32_t reasoning_budget = -1;  // reasoning tokens before the end tag is forced; -1: unlimited
    std::vector<std::pair<std::string, std::string>> template_kwargs;  // name -> JSON text

    bool operator==(const chat_options &) const = default;
};

/** How the head parses one turn's generated text (inputs of llama.cpp common_chat_parse). */
struct chat_parse_spec {
    int32_t format = 0;             // common_chat_format; 0: content only
    std::string parser;             // serialized PEG parser (common_peg_arena); may be empty
    std::string generation_prompt;  // the prompt's tail (e.g. "<think>\n\n</think>\n\n")
    bool thinking         = false;  // the turn may start with reasoning
    bool parse_tool_calls = false;  // tools were offered and may be called

    bool operator==(const chat_parse_spec &) const = default;
};

}  // namespace sf
