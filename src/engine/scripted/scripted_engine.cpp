#include "engine/scripted/scripted_engine.h"

#include <stdexcept>
#include <string_view>

#include "util/log.h"

namespace sf {

scripted_engine::scripted_engine(engine_i &inner, output_script script)
    : inner_(inner), script_(std::move(script)) {
    const auto end = inner_.tokenize(script_.end, false);
    if (end.size() != 1 || !inner_.is_eog(end[0]))
        throw std::runtime_error("scripted output: \"" + script_.end +
                                 "\" is not one end-of-generation token of this model");
    end_token_ = end[0];
}

size_t scripted_engine::prompt_key(std::span<const token_id> prompt) {
    return std::hash<std::string_view>{}(std::string_view(
        reinterpret_cast<const char *>(prompt.data()), prompt.size() * sizeof(token_id)));
}

bool scripted_engine::render_chat(const std::vector<chat_message> &messages,
                                  bool add_generation_prompt, const chat_options &options,
                                  rendered_prompt &out, std::string &error) const {
    if (!inner_.render_chat(messages, add_generation_prompt, options, out, error)) return false;
    const scripted_reply *r = pick_reply(script_, messages, options);
    if (!r) return true;
    const size_t key             = prompt_key(out.tokens);
    std::vector<token_id> tokens = inner_.tokenize(r->text, false);
    std::lock_guard lk(mu_);
    if (replies_.insert_or_assign(key, std::move(tokens)).second) {
        order_.push_back(key);
        if (order_.size() > kRemembered) {
            replies_.erase(order_.front());
            order_.pop_front();
        }
    }
    return true;
}

bool scripted_engine::seq_start(int seq, const sampling_params &params,
                                std::span<const token_id> history, size_t n_generated) {
    running_.erase(seq);
    const size_t n_prompt = history.size() - std::min(n_generated, history.size());
    {
        std::lock_guard lk(mu_);
        auto it = replies_.find(prompt_key(history.first(n_prompt)));
        if (it != replies_.end()) running_[seq] = it->second;
    }
    if (running_.count(seq))
        SF_LOG_INFO("scripted", "sequence %d: scripted reply of %zu tokens", seq,
                    running_[seq].size());
    return inner_.seq_start(seq, params, history, n_generated);
}

token_id scripted_engine::sample(int seq, int item, uint32_t index) {
    auto it = running_.find(seq);
    if (it == running_.end()) return inner_.sample(seq, item, index);
    return index < it->second.size() ? it->second[index] : end_token_;
}

void scripted_engine::seq_end(int seq) {
    running_.erase(seq);
    inner_.seq_end(seq);
}

int64_t scripted_engine::seq_park(int seq) {
    const int64_t h = inner_.seq_park(seq);
    auto it         = running_.find(seq);
    if (it != running_.end()) {
        if (h >= 0) parked_[h] = std::move(it->second);
        running_.erase(it);
    }
    return h;
}

bool scripted_engine::seq_unpark(int64_t handle, int seq) {
    if (!inner_.seq_unpark(handle, seq)) return false;  // still parked (engine.h)
    running_.erase(seq);
    auto it = parked_.find(handle);
    if (it != parked_.end()) {
        running_[seq] = std::move(it->second);
        parked_.erase(it);
    }
    return true;
}

void scripted_engine::seq_drop_parked(int64_t handle) {
    parked_.erase(handle);
    inner_.seq_drop_parked(handle);
}

}  // namespace sf
