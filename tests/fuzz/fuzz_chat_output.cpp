// libFuzzer target: the chat output parser (chat/output_parser.h), which turns a model's
// streamed text into deltas through llama.cpp's common_chat_parse. The specs are what the worker
// makes (engine/llama/chat_render.h) from real chat templates of the pinned llama.cpp tree
// (Qwen3, as the test models; Qwen3-Coder's XML calls; DeepSeek R1; Llama 3.1; Mistral Nemo;
// gpt-oss), with and without tools, plus the content-only spec.
// Input: byte 0 picks the spec, byte 1 seeds the chunk sizes, the rest is the model's text,
// pushed in chunks of whole code points (as the worker sends them), then finish().
// Checks (the header's guarantees): a streamed delta never ends inside a UTF-8 sequence; each
// tool call starts once, in index order, before its arguments; the final message has exactly
// the calls that were started.
#include <chat.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chat/output_parser.h"
#include "engine/llama/chat_render.h"
#include "fuzz_require.h"
#include "util/utf8.h"

namespace {

std::vector<sf::chat_parse_spec> make_specs() {
    std::vector<sf::chat_parse_spec> specs(1);  // content only
    sf::chat_options tools;
    tools.tools.push_back({"get_weather", "Weather of a city",
                           R"({"type":"object","properties":{"city":{"type":"string"},)"
                           R"("days":{"type":"integer"}},"required":["city"]})"});
    tools.tools.push_back({"noop", "Does nothing", R"({"type":"object","properties":{}})"});
    const std::vector<sf::chat_message> messages = {{"user", "Weather in Paris?", "", "", "", {}}};
    for (const char *name :
         {"Qwen-Qwen3-0.6B.jinja", "Qwen3-Coder.jinja",
          "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
          "meta-llama-Llama-3.1-8B-Instruct.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja",
          "openai-gpt-oss-120b.jinja"}) {
        std::ifstream f(std::string(SF_FUZZ_TEMPLATE_DIR) + "/" + name);
        std::stringstream text;
        text << f.rdbuf();
        try {
            auto templates = common_chat_templates_init(nullptr, text.str());
            for (const sf::chat_options &opts : {sf::chat_options{}, tools}) {
                specs.push_back(
                    sf::render_chat_template(templates.get(), messages, true, opts).parse);
            }
        } catch (const std::exception &e) {
            std::fprintf(stderr, "fuzz_chat_output: template %s skipped: %s\n", name, e.what());
        }
    }
    return specs;
}

const std::vector<sf::chat_parse_spec> &specs() {
    static const std::vector<sf::chat_parse_spec> all = make_specs();
    return all;
}

// The tool-call order and the UTF-8 boundary of streamed deltas.
struct delta_checker {
    size_t started = 0;

    void check(const std::vector<sf::chat_delta> &deltas, bool final) {
        for (const auto &d : deltas) {
            if (d.type == sf::chat_delta::kind::TOOL_CALL_START) {
                sf::fuzz::require(d.tool_index == started, "tool calls start in index order");
                sf::fuzz::require(!d.name.empty() && !d.id.empty(),
                                  "a started call has a name and id");
                ++started;
                continue;
            }
            if (d.type == sf::chat_delta::kind::TOOL_CALL_ARGS)
                sf::fuzz::require(d.tool_index < started, "arguments follow their call's start");
            sf::fuzz::require(!d.text.empty(), "a text delta is not empty");
            if (!final)
                sf::fuzz::require(sf::utf8::complete_prefix(d.text) == d.text.size(),
                                  "a streamed delta ends on a code point boundary");
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    specs();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const sf::chat_parse_spec &spec = specs()[data[0] % specs().size()];
    uint32_t seed                   = data[1];
    const std::string_view text(reinterpret_cast<const char *>(data) + 2, size - 2);

    sf::chat_output_parser parser(spec, "call_");
    delta_checker checker;
    size_t pos = 0;
    while (pos < text.size()) {
        seed       = seed * 1103515245u + 12345u;
        size_t n   = 1 + (seed >> 16) % 8;
        size_t end = std::min(text.size(), pos + n);
        // Whole code points, as the worker's text stream sends them.
        while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
        checker.check(parser.push(text.substr(pos, end - pos)), false);
        pos = end;
    }
    checker.check(parser.finish(), true);
    sf::fuzz::require(parser.message().tool_calls.size() == checker.started,
                      "the final message has the started calls");
    sf::fuzz::require(parser.text() == text, "the raw text is what was pushed");
    return 0;
}
