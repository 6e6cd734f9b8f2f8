#include "cache/prefix_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "util/log.h"

namespace sf::cache {

namespace {

// Weight of sharing in the eviction score, in cache uses (see prefix_cache.h).
constexpr double k_share_weight = 32.0;
// Tokens a disk entry may lack of a hot prefix and still stand for it (write_to_disk).
constexpr int32_t k_disk_slack = 32;

// A scope's key: its marker ids, then the tokens (scope 0: the tokens alone, not copied). Lengths
// found for a key count its markers; real() takes them off.
class scoped_key {
  public:
    scoped_key(uint64_t scope, std::span<const token_id> tokens) {
        if (scope == 0) {
            key_ = tokens;
            return;
        }
        buf_.reserve(tokens.size() + 2);
        buf_.push_back(static_cast<token_id>(0x80000000u | static_cast<uint32_t>(scope >> 33)));
        buf_.push_back(static_cast<token_id>(0x80000000u | static_cast<uint32_t>(scope)));
        buf_.insert(buf_.end(), tokens.begin(), tokens.end());
        key_     = buf_;
        markers_ = 2;
    }
    std::span<const token_id> key() const { return key_; }
    /** The key of the first `n` tokens. */
    std::span<const token_id> first(int32_t n) const {
        return key_.first(static_cast<size_t>(n + markers_));
    }
    int32_t markers() const { return markers_; }
    /** A key length (or a limit on one) for `n` tokens, and back. */
    int32_t keyed(int32_t n) const { return n + markers_; }
    int32_t real(int32_t n) const { return std::max(0, n - markers_); }

  private:
    std::vector<token_id> buf_;
    std::span<const token_id> key_;
    int32_t markers_ = 0;
};

}  // namespace

int32_t common_prefix(std::span<const token_id> a, std::span<const token_id> b, int32_t max_len) {
    const size_t n = std::min({a.size(), b.size(), static_cast<size_t>(std::max(max_len, 0))});
    size_t i       = 0;
    while (i < n && a[i] == b[i]) ++i;
    return static_cast<int32_t>(i);
}

uint64_t cache_scope_id(std::string_view scope) {
    if (scope.empty()) return 0;
    uint64_t v = 0;
    bool hex   = scope.size() == 16;
    for (char c : scope) {
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) {
            hex = false;
            break;
        }
        v = v << 4 | static_cast<uint64_t>(d);
    }
    if (!hex) {
        v = 1469598103934665603ull;  // FNV-1a: only to tell scopes apart, not a secret
        for (unsigned char c : scope) v = (v ^ c) * 1099511628211ull;
    }
    return v == 0 ? 1 : v;
}

prefix_cache::prefix_cache(engine_i &engine, cache_options opts)
    : engine_(engine), opts_(std::move(opts)), partial_(engine.partial_prefixes()) {
    if (enabled() && !opts_.disk_dir.empty() && opts_.disk_bytes > 0 &&
        !opts_.model_fingerprint.empty()) {
        disk_ =
            std::make_unique<disk_store>(opts_.disk_dir, opts_.model_fingerprint, opts_.disk_bytes);
    }
    stats_.ram_budget = opts_.ram_bytes;
    SF_LOG_INFO("cache", "prefix cache: %s, %lld MiB in memory, disk tier %s",
                !enabled() ? "off"
                : partial_ ? "shared KV prefixes"
                           : "state snapshots at message boundaries",
                static_cast<long long>(opts_.ram_bytes >> 20),
                disk_ ? disk_->dir().c_str() : "off");
}

prefix_cache::~prefix_cache() = default;

int32_t prefix_cache::peek(std::span<const token_id> prompt, int32_t max_len,
                           const std::vector<live_source> &live, uint64_t scope) const {
    if (!enabled()) return 0;
    const scoped_key k(scope, prompt);
    auto m       = tree_.find(k.key(), k.keyed(max_len));
    int32_t best = k.real(partial_ ? m.shared : m.whole);
    if (partial_) {
        for (const auto &l : live) best = std::max(best, common_prefix(prompt, l.tokens, max_len));
    }
    if (disk_) {
        auto d = disk_->find(k.key(), k.keyed(max_len));
        best   = std::max(best, k.real(partial_ ? d.shared : d.whole));
    }
    return best;
}

int32_t prefix_cache::attach(int seq, std::span<const token_id> prompt, int32_t max_len,
                             const std::vector<live_source> &live, uint64_t scope) {
    {
        std::lock_guard lk(stats_mu_);
        stats_.lookups++;
        stats_.prompt_tokens += prompt.size();
    }
    if (!enabled()) return 0;
    // Best source in memory: an entry, or (attention models) a live sequence.
    const scoped_key k(scope, prompt);
    auto m            = tree_.find(k.key(), k.keyed(max_len));
    int32_t mem_n     = k.real(partial_ ? m.shared : m.whole);
    int64_t mem_entry = partial_ ? m.shared_entry : m.whole_entry;
    int live_seq      = -1;
    if (partial_) {
        for (const auto &l : live) {
            const int32_t n = common_prefix(prompt, l.tokens, max_len);
            if (n > mem_n) mem_n = n, live_seq = l.seq, mem_entry = -1;
        }
    }
    int32_t n = 0;
    if (disk_) {
        auto d            = disk_->find(k.key(), k.keyed(max_len));
        const int32_t dn  = k.real(partial_ ? d.shared : d.whole);
        const int64_t did = partial_ ? d.shared_entry : d.whole_entry;
        if (dn > mem_n && did >= 0 && load_from_disk(seq, did, dn, k.markers())) n = dn;
    }
    bool from_memory = false;
    if (n == 0 && mem_n > 0) {
        if (live_seq >= 0) {
            if (engine_.seq_share(live_seq, seq, mem_n)) n = mem_n;
        } else if (auto it = entries_.find(mem_entry); it != entries_.end()) {
            if (engine_.seq_load(seq, it->second.state())) {
                // A snapshot of a longer sequence: cut back to the common prefix.
                n = mem_n;
                if (partial_ && !engine_.seq_trim(seq, n)) {
                    engine_.seq_trim(seq, 0);
                    n = 0;
                }
            }
            if (n > 0) {
                it->second.hits++;
                touch(mem_entry);
            }
        }
        from_memory = n > 0;
    }
    if (from_memory) write_to_disk(seq, k.first(n), k.markers());
    {
        std::lock_guard lk(stats_mu_);
        if (n > 0) stats_.hits++;
        stats_.cached_tokens += static_cast<uint64_t>(n);
    }
    return n;
}

void prefix_cache::reused_in_place(int seq, std::span<const token_id> prompt, int32_t n,
                                   uint64_t scope) {
    {
        std::lock_guard lk(stats_mu_);
        stats_.lookups++;
        stats_.prompt_tokens += prompt.size();
        if (n > 0) stats_.hits++;
        stats_.cached_tokens += static_cast<uint64_t>(std::max(n, 0));
    }
    if (n > 0) {
        const scoped_key k(scope, prompt);
        write_to_disk(seq, k.first(n), k.markers());
    }
}

// `n`: tokens to keep (markers not counted); the entry's key has `markers` marker ids first.
bool prefix_cache::load_from_disk(int seq, int64_t disk_id, int32_t n, int32_t markers) {
    mapped_payload blob;
    if (!disk_->load(disk_id, blob)) return false;
    if (!engine_.seq_load(seq, blob.payload())) {
        SF_LOG_WARN("cache", "the engine refused a prefix state from disk; prefilling instead");
        return false;
    }
    const auto tokens = disk_->tokens(disk_id);
    if (partial_) {
        if (n + markers < static_cast<int32_t>(tokens.size()) && !engine_.seq_trim(seq, n)) {
            engine_.seq_trim(seq, 0);
            return false;
        }
    } else {
        // A snapshot read from disk is hot again: keep it as a memory entry too (still mapped).
        entry e;
        e.bytes          = static_cast<int64_t>(blob.payload().size());
        e.mapped         = std::move(blob);
        e.hits           = 1;
        const int64_t id = add(tokens, std::move(e));
        enforce_budget(id);
    }
    return true;
}

// A prefix reused by a second sequence is hot: worth surviving a restart. `tokens`: its key
// (`markers` scope markers, then the tokens `seq` holds).
void prefix_cache::write_to_disk(int seq, std::span<const token_id> tokens, int32_t markers) {
    const auto n = static_cast<int32_t>(tokens.size());
    if (!disk_ || n - markers < opts_.min_disk_tokens || disk_->has(tokens)) return;
    // A file that already holds nearly all of it will do: requests sharing a system prompt
    // share it plus a few tokens of their own question, a little more or less each time, and
    // a file per length cost a state copy on the path to each first token.
    if (partial_ && disk_->find(tokens, n).shared >= n - k_disk_slack) return;
    host_buffer blob;
    if (partial_) {
        if (!engine_.seq_save(seq, blob)) return;  // seq holds exactly `tokens` now
    } else {
        auto m  = tree_.find(tokens, static_cast<int32_t>(tokens.size()));
        auto it = entries_.find(m.whole_entry);
        if (m.whole != static_cast<int32_t>(tokens.size()) || it == entries_.end()) return;
        const auto s = it->second.state();
        blob.resize(s.size());
        std::memcpy(blob.data(), s.data(), s.size());
    }
    disk_->store(tokens, std::move(blob));
}

void prefix_cache::snapshot(int seq, std::span<const token_id> real, uint64_t scope) {
    if (!enabled() || real.empty()) return;
    const scoped_key k(scope, real);
    const auto tokens = k.key();
    const auto len    = static_cast<int32_t>(tokens.size());
    auto m            = tree_.find(tokens, len);
    if (m.whole == len) {
        touch(m.whole_entry);
        return;
    }
    entry e;
    if (!engine_.seq_save(seq, e.snapshot)) return;
    e.bytes          = static_cast<int64_t>(e.snapshot.capacity());
    const int64_t id = add(tokens, std::move(e));
    enforce_budget(id);
}

void prefix_cache::retain(int seq, std::span<const token_id> real, uint64_t scope) {
    if (!enabled() || real.empty()) return;
    if (!partial_) {
        snapshot(seq, real, scope);
        return;
    }
    const scoped_key k(scope, real);
    const auto tokens = k.key();
    const auto len    = static_cast<int32_t>(tokens.size());
    auto m            = tree_.find(tokens, len);
    if (m.shared == len) {
        touch(m.shared_entry);  // an entry already holds all of it
        return;
    }
    // The cells go with the sequence; keep a host copy, which any later prompt sharing a
    // prefix of it loads and cuts back.
    entry e;
    if (!engine_.seq_save(seq, e.snapshot)) return;
    e.bytes = static_cast<int64_t>(e.snapshot.capacity());
    // Entries that are whole a prefix of this one are redundant now.
    for (;;) {
        auto w = tree_.find(tokens, len);
        if (w.whole_entry < 0) break;
        e.hits += entries_[w.whole_entry].hits;
        remove(w.whole_entry);
    }
    const int64_t id = add(tokens, std::move(e));
    enforce_budget(id);
}

int64_t prefix_cache::add(std::span<const token_id> tokens, entry e) {
    const int64_t id = next_id_++;
    e.last_used      = ++clock_;
    bytes_ += e.bytes;
    tree_.insert(id, tokens);
    entries_.emplace(id, std::move(e));
    return id;  // published by enforce_budget(), which always follows
}

void prefix_cache::remove(int64_t id) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    bytes_ -= it->second.bytes;
    tree_.erase(id);
    entries_.erase(it);
}

void prefix_cache::touch(int64_t id) {
    auto it = entries_.find(id);
    if (it != entries_.end()) it->second.last_used = ++clock_;
}

int64_t prefix_cache::victim(int64_t keep) const {
    int64_t best    = -1;
    double best_val = 0;
    for (const auto &[id, e] : entries_) {
        if (id == keep) continue;
        const double v =
            static_cast<double>(e.last_used) + k_share_weight * std::log2(1.0 + e.hits);
        if (best < 0 || v < best_val) best = id, best_val = v;
    }
    return best;
}

void prefix_cache::enforce_budget(int64_t keep) {
    uint64_t evicted = 0;
    while (bytes_ > opts_.ram_bytes && !entries_.empty()) {
        // The newest entry goes last, and only when it alone exceeds the budget.
        int64_t v = victim(keep);
        if (v < 0) v = keep;
        remove(v);
        ++evicted;
    }
    if (evicted) {
        std::lock_guard lk(stats_mu_);
        stats_.evictions += evicted;
    }
    // Only now: /metrics must never see the moment between an entry's insertion and the
    // evictions that make room for it (the budget looked exceeded under load).
    publish();
}

void prefix_cache::publish() {
    std::lock_guard lk(stats_mu_);
    stats_.ram_bytes = bytes_;
    stats_.entries   = static_cast<int64_t>(entries_.size());
}

cache_stats prefix_cache::stats() const {
    cache_stats s;
    {
        std::lock_guard lk(stats_mu_);
        s = stats_;
    }
    if (disk_) s.disk = disk_->stats();
    return s;
}

void prefix_cache::flush() {
    if (disk_) disk_->flush();
}

}  // namespace sf::cache
