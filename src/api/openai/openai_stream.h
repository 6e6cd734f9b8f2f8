// OpenAI's stream encoders (api/common/stream_encoder.h): chat.completion.chunk or text_completion
// SSE frames (`data: <json>`, `id: <session>:<index>` on the frame that completes a token), the
// final chunk with finish_reason, the usage chunk when asked (stream_options.include_usage),
// then `data: [DONE]`. An error after the headers went out is one error body in-band, then
// [DONE] (the stream never hangs).
#pragma once

#include <memory>

#include "api/common/stream_encoder.h"
#include "api/openai/openai_response.h"
#include "chat/output_parser.h"

namespace sf {

class openai_stream_encoder final : public stream_encoder {
  public:
    /**
     * `meta`: the response's id, model and prompt counts (completion counts are filled from the
     * finish). `parser`: the chat output parser (content, reasoning and tool-call deltas) of a
     * chat stream; null for a text completion. `include_usage`: the usage chunk before [DONE].
     */
    openai_stream_encoder(openai_meta meta, std::unique_ptr<chat_output_parser> parser,
                          bool include_usage);

    const char *content_type() const override { return "text/event-stream"; }
    std::string open(bool resumed) override;
    void skip(const session_event &token) override;
    std::string token(const session_event &token, const std::string &id) override;
    std::string finish(const session_event &fin, const std::string &id) override;
    std::string after_end() override;

  private:
    openai_meta meta_;
    std::unique_ptr<chat_output_parser> parser_;
    bool include_usage_ = false;
};

}  // namespace sf
