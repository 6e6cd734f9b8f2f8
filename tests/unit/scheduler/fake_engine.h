// A deterministic engine for scheduler tests: token i of a sequence is (last input token + 1),
// pieces are "<id>", EOG is id 0. Records every decode call.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"

namespace sf::test {

class fake_engine : public engine_i {
  public:
    int32_t n_ctx_seq() const override { return ctx; }
    int32_t n_seq_max() const override { return seqs; }
    int32_t n_batch() const override { return batch; }
    std::vector<token_id> tokenize(std::string_view text, bool) const override {
        return std::vector<token_id>(text.size(), 100);
    }
    std::string token_piece(token_id t) const override {
        return pieces.count(t) ? pieces.at(t) : "<" + std::to_string(t) + ">";
    }
    bool is_eog(token_id t) const override { return t == 0; }
    using engine_i::render_chat;
    bool render_chat(const std::vector<chat_message> &, bool, const chat_options &,
                     rendered_prompt &, std::string &) const override {
        return false;
    }
    bool seq_start(int, const sampling_params &, std::span<const token_id>, size_t) override {
        return true;
    }
    int decode(const std::vector<batch_item> &items) override {
        if (decode_sleep_us)
            std::this_thread::sleep_for(std::chrono::microseconds(decode_sleep_us));
        calls.push_back(items);
        last = items;
        return 0;
    }
    token_id sample(int, int item, uint32_t) override { return last.at(item).tokens.back() + 1; }
    void seq_end(int seq) override { ended.push_back(seq); }
    // Parking keeps nothing the fake needs: its "KV" is the scheduler's own bookkeeping.
    int64_t seq_park(int seq) override {
        parked_seqs.push_back(seq);
        return next_handle++;
    }
    bool seq_unpark(int64_t handle, int seq) override {
        unparked.push_back({handle, seq});
        return true;
    }
    void seq_drop_parked(int64_t) override {}
    size_t parked_bytes() const override { return 0; }

    int32_t ctx = 4096, seqs = 4, batch = 64;
    int decode_sleep_us = 0;  // makes ticks take time, so sessions can arrive mid-run
    std::map<token_id, std::string> pieces;
    std::vector<std::vector<batch_item>> calls;
    std::vector<batch_item> last;
    std::vector<int> ended;
    std::vector<int> parked_seqs;
    std::vector<std::pair<int64_t, int>> unparked;
    int64_t next_handle = 1;
};

}  // namespace sf::test
