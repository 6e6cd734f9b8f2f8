// The scripted test engine: an engine_i that wraps a real one (llama.cpp on a tiny
// random-weight model) and replaces only its sampling with a script (output_script.h), so the
// real worker — scheduler, chat template, tool-call grammar and parser, journal — runs whole
// agent tool loops whose answers are known. Prompts are rendered, tokenized and decoded by the
// wrapped engine as usual; each sampled token is the next token of the scripted reply, then
// the script's end-of-turn token.
//
// The reply is chosen when the prompt is rendered (render_chat sees the messages and the
// offered tools) and found again by the prompt's tokens when its sequence starts. Turned on by
// the hidden `serve --scripted-output FILE` flag (tests only).
//
// Threads: as engine_i. render_chat (gRPC threads) and seq_start (tick thread) share the
// chosen replies under a mutex; per-sequence state belongs to the tick thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/scripted/output_script.h"

namespace sf {

class scripted_engine final : public engine_i {
  public:
    /**
     * Wraps `inner` (which must outlive this). Throws std::runtime_error when the script's
     * end-of-turn text is not one end-of-generation token of the model.
     */
    scripted_engine(engine_i &inner, output_script script);

    int32_t n_ctx_seq() const override { return inner_.n_ctx_seq(); }
    int32_t n_seq_max() const override { return inner_.n_seq_max(); }
    int32_t n_batch() const override { return inner_.n_batch(); }
    int32_t n_vocab() const override { return inner_.n_vocab(); }
    std::vector<token_id> tokenize(std::string_view text, bool add_bos) const override {
        return inner_.tokenize(text, add_bos);
    }
    std::string token_piece(token_id t) const override { return inner_.token_piece(t); }
    bool is_eog(token_id t) const override { return inner_.is_eog(t); }
    using engine_i::render_chat;
    /** Renders through the wrapped engine and remembers the reply the script picks for it. */
    bool render_chat(const std::vector<chat_message> &messages, bool add_generation_prompt,
                     const chat_options &options, rendered_prompt &out,
                     std::string &error) const override;

    /** Starts the wrapped sequence; a prompt with a scripted reply will emit that reply. */
    bool seq_start(int seq, const sampling_params &params, std::span<const token_id> history,
                   size_t n_generated = 0) override;
    int decode(const std::vector<batch_item> &items) override { return inner_.decode(items); }
    void set_interrupt(const std::atomic<bool> *flag) override { inner_.set_interrupt(flag); }
    /** Token `index` of the scripted reply (then end of turn), or the wrapped engine's draw. */
    token_id sample(int seq, int item, uint32_t index) override;
    void seq_end(int seq) override;
    void warm_up() override { inner_.warm_up(); }

    int64_t seq_park(int seq) override;
    bool seq_unpark(int64_t handle, int seq) override;
    void seq_drop_parked(int64_t handle) override;
    size_t parked_bytes() const override { return inner_.parked_bytes(); }

    bool partial_prefixes() const override { return inner_.partial_prefixes(); }
    bool seq_share(int src, int dst, int32_t n) override { return inner_.seq_share(src, dst, n); }
    bool seq_trim(int seq, int32_t n) override { return inner_.seq_trim(seq, n); }
    bool seq_save(int seq, host_buffer &out) override { return inner_.seq_save(seq, out); }
    bool seq_load(int seq, std::span<const uint8_t> data) override {
        return inner_.seq_load(seq, data);
    }
    std::vector<int32_t> message_boundaries(const std::vector<chat_message> &messages,
                                            const chat_options &options,
                                            const rendered_prompt &prompt) const override {
        return inner_.message_boundaries(messages, options, prompt);
    }

  private:
    /** Prompts rendered recently → the tokens of their scripted reply (bounded, FIFO). */
    static constexpr size_t kRemembered = 256;
    static size_t prompt_key(std::span<const token_id> prompt);

    engine_i &inner_;
    output_script script_;
    token_id end_token_ = 0;

    mutable std::mutex mu_;
    mutable std::unordered_map<size_t, std::vector<token_id>> replies_;  // guarded by mu_
    mutable std::list<size_t> order_;                                    // guarded by mu_

    // Tick thread only: the reply each running (or parked) sequence emits.
    std::map<int, std::vector<token_id>> running_;
    std::map<int64_t, std::vector<token_id>> parked_;
};

}  // namespace sf
