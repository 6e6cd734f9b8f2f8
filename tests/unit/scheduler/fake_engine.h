// A deterministic engine for scheduler tests: token i of a sequence is (last input token + 1),
// pieces are "<id>", EOG is id 0. Records every decode call.
// Its "memory" is the list of tokens each sequence id holds (one stream per sequence, as the
// llama.cpp engine's KV cache), so prefix-cache tests can check what was copied, saved,
// restored and decoded; `partial` says whether prefixes can be copied and cut (attention KV)
// or only saved and restored whole (a recurrent model).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"

namespace sf::test {

class fake_engine : public engine_i {
  public:
    int32_t n_ctx_seq() const override { return ctx; }
    int32_t n_seq_max() const override { return seqs; }
    // pool: `capacity` cells shared by every sequence (--kv-unified), counted as held tokens.
    int64_t kv_cells_total() const override { return pool ? int64_t(capacity) : -1; }
    int64_t kv_cells_used() const override {
        if (!pool) return -1;
        int64_t n = 0;
        for (const auto &[s, toks] : mem) n += int64_t(toks.size());
        return n;
    }
    int32_t n_batch() const override { return batch; }
    int32_t n_vocab() const override { return vocab; }
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
    bool seq_start(int seq, const sampling_params &p, std::span<const token_id>, size_t) override {
        samplers.insert(seq);
        drop_deferred(seq);
        if (p.constraint.grammar.empty())
            grammar_seqs.erase(seq);
        else
            grammar_seqs.insert(seq);
        return true;
    }
    // A sequence started with a grammar samples through sample_deferred; its tokens come back
    // from take_deferred only after release_deferred() (the test plays the sampling thread).
    bool sample_deferrable(int seq) const override { return grammar_seqs.count(seq) > 0; }
    void sample_deferred(int seq, int item, uint32_t index) override {
        ++deferred_samples;
        const token_id t = sample(seq, item, index);
        std::lock_guard lk(deferred_mu);
        deferred_jobs.emplace_back(seq, t);
    }
    void take_deferred(std::vector<std::pair<int, token_id>> &out) override {
        std::lock_guard lk(deferred_mu);
        if (!deferred_released) return;
        out.insert(out.end(), deferred_jobs.begin(), deferred_jobs.end());
        deferred_jobs.clear();
    }
    void on_deferred_ready(std::function<void()> wake) override {
        std::lock_guard lk(deferred_mu);
        deferred_wake = std::move(wake);
    }
    /** From now on deferred samples finish at once; wakes the tick loop. */
    void release_deferred() {
        std::function<void()> wake;
        {
            std::lock_guard lk(deferred_mu);
            deferred_released = true;
            wake              = deferred_wake;
        }
        if (wake) wake();
    }
    void drop_deferred(int seq) {
        std::lock_guard lk(deferred_mu);
        std::erase_if(deferred_jobs, [&](const auto &j) { return j.first == seq; });
    }
    int decode(const std::vector<batch_item> &items) override {
        size_t n_in = 0;
        for (const auto &it : items) n_in += it.tokens.size();
        in_decode = true;
        // The decode's time, in 100 us steps that watch the interrupt flag (set_interrupt).
        const auto until = std::chrono::steady_clock::now() +
                           std::chrono::microseconds(decode_sleep_us + token_sleep_us * n_in);
        while (std::chrono::steady_clock::now() < until) {
            if (interrupt_flag && interrupt_flag->load()) {
                in_decode = false;
                ++interrupted;
                return k_decode_interrupted;  // nothing applied, as the real engine
            }
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        in_decode = false;
        for (const auto &it : items)
            for (token_id t : it.tokens)
                if (poison.count(t)) return -1;  // nothing applied, as llama_decode's -1
        size_t cells = 0, adding = 0;
        for (auto &[s, toks] : mem) cells += toks.size();
        for (const auto &it : items) adding += it.tokens.size();
        if (capacity > 0 && cells + adding > capacity) return 1;  // no room (llama_decode's 1)
        calls.push_back(items);
        last = items;
        for (const auto &it : items) {
            auto &m = mem[it.seq];
            if (static_cast<int32_t>(m.size()) != it.pos) ++bad_positions;
            m.insert(m.end(), it.tokens.begin(), it.tokens.end());
        }
        return 0;
    }
    void set_interrupt(const std::atomic<bool> *flag) override { interrupt_flag = flag; }
    token_id sample(int seq, int item, uint32_t) override {
        if (!samplers.count(seq)) ++no_sampler;  // the real engine would crash here
        if (!sample_from_memory) return last.at(item).tokens.back() + 1;
        // Depends on every token in the sequence's memory: a wrong prefix changes it.
        uint32_t h = 7;
        for (token_id t : mem[seq]) h = h * 31 + static_cast<uint32_t>(t);
        return static_cast<token_id>(1000 + h % 1000);
    }
    void seq_end(int seq) override {
        drop_deferred(seq);
        ended.push_back(seq);
        samplers.erase(seq);
        mem.erase(seq);
    }
    int64_t seq_park(int seq) override {
        if (park_sleep_us > 0) {
            in_park.store(true);
            std::this_thread::sleep_for(std::chrono::microseconds(park_sleep_us));
            in_park.store(false);
        }
        if (on_park) on_park();
        drop_deferred(seq);
        parked_seqs.push_back(seq);
        parked_mem[next_handle] = mem[seq];
        mem.erase(seq);
        samplers.erase(seq);
        return next_handle++;
    }
    bool seq_unpark(int64_t handle, int seq) override {
        unparked.push_back({handle, seq});
        mem[seq] = parked_mem[handle];
        samplers.insert(seq);
        return true;
    }
    bool partial_prefixes() const override { return partial; }
    bool seq_share(int src, int dst, int32_t n) override {
        auto s = mem[src];
        s.resize(std::min(s.size(), static_cast<size_t>(n)));
        mem[dst] = s;
        ++shares;
        return true;
    }
    bool seq_trim(int seq, int32_t n) override {
        if (!partial && n != 0) return false;
        auto &m = mem[seq];
        m.resize(std::min(m.size(), static_cast<size_t>(n)));
        if (m.empty()) mem.erase(seq);
        return true;
    }
    void warm_up() override {
        warmed_on = std::this_thread::get_id();
        if (warm_up_throws) throw std::runtime_error("warm-up failed");
    }
    bool seq_save(int seq, host_buffer &out) override {
        const auto &m = mem[seq];
        out.resize(m.size() * bytes_per_token);
        std::memset(out.data(), 0, out.size());
        std::memcpy(out.data(), m.data(), m.size() * sizeof(token_id));
        return true;
    }
    bool seq_load(int seq, std::span<const uint8_t> data) override {
        const size_t n = data.size() / bytes_per_token;
        std::vector<token_id> m(n);
        std::memcpy(m.data(), data.data(), n * sizeof(token_id));
        mem[seq] = m;
        ++loads;
        return true;
    }
    void seq_drop_parked(int64_t) override {}
    size_t parked_bytes() const override { return 0; }

    int32_t ctx = 4096, seqs = 4, batch = 64, vocab = 1 << 20;
    std::set<token_id> poison;    // a batch holding one of these tokens fails (llama_decode's -1)
    int token_sleep_us      = 0;  // decode time per input token (on top of decode_sleep_us)
    bool partial            = true;  // attention-like memory
    bool sample_from_memory = false;
    bool warm_up_throws     = false;
    std::thread::id warmed_on;                    // the thread warm_up() ran on
    size_t capacity                         = 0;  // cells in all sequences' memory; 0: unbounded
    bool pool                               = false;  // kv_cells_*: capacity is a shared pool
    static constexpr size_t bytes_per_token = 16;     // >= sizeof(token_id): saves hold the ids
    std::map<int, std::vector<token_id>> mem;
    std::map<int64_t, std::vector<token_id>> parked_mem;
    int bad_positions = 0;  // a batch item whose position did not follow the memory
    int shares = 0, loads = 0;
    std::set<int> samplers;            // sequences with a sampler (seq_start .. seq_end / park)
    int no_sampler      = 0;           // samples of a sequence without one
    int decode_sleep_us = 0;           // makes ticks take time, so sessions can arrive mid-run
    int park_sleep_us   = 0;           // a park that takes time (a device-to-host copy on a GPU)
    std::atomic<bool> in_park{false};  // a seq_park is running (tests wait on it)
    std::function<void()> on_park;     // called inside seq_park (tick thread)
    const std::atomic<bool> *interrupt_flag = nullptr;  // set_interrupt's
    std::atomic<bool> in_decode{false};                 // a decode is running (tests wait on it)
    int interrupted = 0;                                // decodes stopped by the flag
    std::map<token_id, std::string> pieces;
    std::vector<std::vector<batch_item>> calls;
    std::vector<batch_item> last;
    std::vector<int> ended;
    std::vector<int> parked_seqs;
    std::vector<std::pair<int64_t, int>> unparked;
    int64_t next_handle = 1;
    std::set<int> grammar_seqs;  // tick thread
    std::atomic<int> deferred_samples{0};
    std::mutex deferred_mu;  // guards the three below (the test's thread releases)
    std::vector<std::pair<int, token_id>> deferred_jobs;
    bool deferred_released = false;
    std::function<void()> deferred_wake;
};

}  // namespace sf::test
