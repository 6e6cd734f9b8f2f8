#include "chat/output_parser.h"

#include <chat.h>

#include "util/log.h"
#include "util/utf8.h"

namespace sf {

struct chat_output_parser::impl {
    common_chat_parser_params params;
};

chat_output_parser::chat_output_parser(const chat_parse_spec &spec, std::string id_prefix)
    : impl_(new impl), id_prefix_(std::move(id_prefix)) {
    auto &p             = impl_->params;
    p.format            = static_cast<common_chat_format>(spec.format);
    p.reasoning_format  = COMMON_REASONING_FORMAT_DEEPSEEK;
    p.generation_prompt = spec.generation_prompt;
    p.parse_tool_calls  = spec.parse_tool_calls;
    if (!spec.parser.empty()) {
        try {
            p.parser.load(spec.parser);
        } catch (const std::exception &e) {
            // A worker and head of one build agree on the format; never fail a response on it.
            SF_LOG_WARN("chat", "cannot load the chat parser (%s); answers are plain content",
                        e.what());
        }
    }
}

chat_output_parser::~chat_output_parser() {
    delete impl_;
}

namespace {

parsed_message from_common(const common_chat_msg &m) {
    parsed_message out{m.reasoning_content, m.content, {}};
    for (const auto &tc : m.tool_calls) out.tool_calls.push_back({tc.id, tc.name, tc.arguments});
    return out;
}

// Appends to `emitted` what `next` adds to it, when `next` extends it (a parser may revise
// text it has not committed to; what was sent cannot be taken back, so that waits). Unless
// `final`, stops before an incomplete UTF-8 sequence.
std::string grow(std::string &emitted, const std::string &next, bool final) {
    if (next.size() <= emitted.size() || next.compare(0, emitted.size(), emitted) != 0) return {};
    std::string_view add(next.data() + emitted.size(), next.size() - emitted.size());
    if (!final) add = add.substr(0, utf8::complete_prefix(add));
    emitted.append(add);
    return std::string(add);
}

}  // namespace

void chat_output_parser::diff(const parsed_message &next, bool final,
                              std::vector<chat_delta> &out) {
    if (auto d = grow(msg_.reasoning, next.reasoning, final); !d.empty())
        out.push_back({chat_delta::kind::REASONING, 0, std::move(d), "", ""});
    if (auto d = grow(msg_.content, next.content, final); !d.empty())
        out.push_back({chat_delta::kind::CONTENT, 0, std::move(d), "", ""});
    for (size_t i = 0; i < next.tool_calls.size(); ++i) {
        const auto &tc = next.tool_calls[i];
        if (i >= msg_.tool_calls.size()) {
            // A name is complete once its arguments began, a later call exists, or at the end.
            const bool name_done = final || !tc.arguments.empty() || i + 1 < next.tool_calls.size();
            if (!name_done || tc.name.empty()) break;
            tool_call started{tc.id.empty() ? id_prefix_ + std::to_string(i) : tc.id, tc.name, ""};
            out.push_back({chat_delta::kind::TOOL_CALL_START, i, "", started.id, started.name});
            msg_.tool_calls.push_back(std::move(started));
        }
        if (auto d = grow(msg_.tool_calls[i].arguments, tc.arguments, final); !d.empty())
            out.push_back({chat_delta::kind::TOOL_CALL_ARGS, i, std::move(d), "", ""});
    }
}

std::vector<chat_delta> chat_output_parser::push(std::string_view text) {
    std::vector<chat_delta> out;
    if (text.empty()) return out;
    text_.append(text);
    try {
        diff(from_common(common_chat_parse(text_, /*is_partial=*/true, impl_->params)), false, out);
    } catch (const std::exception &e) {
        SF_LOG_DEBUG("chat", "partial parse failed: %s", e.what());  // more text may fix it
    }
    return out;
}

std::vector<chat_delta> chat_output_parser::finish() {
    parsed_message fin;
    try {
        fin = from_common(common_chat_parse(text_, /*is_partial=*/false, impl_->params));
    } catch (const std::exception &) {
        // The text does not match the format (cut by max_tokens, or unconstrained output):
        // keep what a partial parse recognizes, else the raw text as content.
        try {
            fin = from_common(common_chat_parse(text_, /*is_partial=*/true, impl_->params));
        } catch (const std::exception &) {
        }
        if (fin.content.empty() && fin.reasoning.empty() && fin.tool_calls.empty())
            fin.content = text_;
    }
    std::vector<chat_delta> out;
    diff(fin, true, out);
    // What the stream could not send (a revision) still belongs to the final message.
    if (msg_.reasoning != fin.reasoning) msg_.reasoning = fin.reasoning;
    if (msg_.content != fin.content) msg_.content = fin.content;
    for (size_t i = 0; i < msg_.tool_calls.size() && i < fin.tool_calls.size(); ++i)
        msg_.tool_calls[i].arguments = fin.tool_calls[i].arguments;
    return out;
}

}  // namespace sf
