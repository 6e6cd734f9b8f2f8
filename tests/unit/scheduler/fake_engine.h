// A deterministic engine for scheduler tests: token i of a sequence is (last input token + 1),
// pieces are "<id>", EOG is id 0. Records every decode call.
#pragma once

#include <map>
#include <string>
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
    bool render_chat(const std::vector<chat_message> &, bool, rendered_prompt &,
                     std::string &) const override {
        return false;
    }
    void seq_start(int, const sampling_params &, std::span<const token_id>) override {}
    int decode(const std::vector<batch_item> &items) override {
        calls.push_back(items);
        last = items;
        return 0;
    }
    token_id sample(int, int item) override { return last.at(item).tokens.back() + 1; }
    void seq_end(int seq) override { ended.push_back(seq); }

    int32_t ctx = 4096, seqs = 4, batch = 64;
    std::map<token_id, std::string> pieces;
    std::vector<std::vector<batch_item>> calls;
    std::vector<batch_item> last;
    std::vector<int> ended;
};

}  // namespace sf::test
