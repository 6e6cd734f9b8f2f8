// Fairness within a priority class by least attained service (issue #18), for requests that
// carry no priority marker: the scheduler serves first the clients, then the sequences, that
// have received the least service recently, the way FastServe's skip-join MLFQ and
// least-attained-service scheduling do, so a short newcomer does not queue behind long jobs.
//
// * Service is tokens computed for a sequence (prompt tokens prefilled + tokens decoded; prefix
//   cache hits cost nothing and count nothing), exponentially decayed with `half_life_ms`.
//   A client's service is the sum over its sequences, decayed the same way. A client is the
//   API key, else the User-Agent, else the connection (api/common/priority.h client_identity).
// * Order: within a class, (client's service, sequence's service), least first; explicit
//   classes (and aging) still come before it.
// * Preemption: with no free sequence, a newcomer parks the most-served running sequence of
//   its class that ranks after the newcomer and has had at least `quantum` tokens of service
//   since it was placed (or resumed), or whose prompt alone is that long while its state is
//   not yet (never parked yet: FastServe's skip-join), by the same park/resume path an
//   interactive request uses on a batch one.
// * Minimum share: each tick, `min_share` of the prompt budget goes first to the class's
//   longest-waiting prefill, so a flood of newcomers never starves a long prompt.
//
// Plain data, no threads, no clock of its own: the tick thread owns it and passes `now`.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace sf {

/** The policy's parameters; each default says why. */
struct service_options {
    // How long past service counts: it halves every half_life_ms. 5 s: longer than a burst of
    // ticks (an ordering that flips every tick would thrash the prompt budget), shorter than a
    // conversation's pause, so the previous turn's tokens and an agent's earlier requests are
    // forgiven within ~30 s (2^-6). 0: never forgotten.
    int64_t half_life_ms = 5000;
    // Least service (tokens prefilled + decoded) a sequence gets after being placed or resumed
    // before a same-class newcomer may park it. 512: (1) a burst of short requests (prompt +
    // answer under 512 tokens) is never time-sliced: among equal short jobs first come, first
    // served finishes them soonest, round-robin would finish them all late; (2) parking copies
    // the sequence's state out and back, so each placement does at least this much work and
    // two sequences cannot trade a slot every tick; (3) a long prompt reaches it within a few
    // ticks (8 prefills of a 512-token tick: 8 ticks), and one whose prompt alone is this long
    // may be parked before, while its state is under this many tokens (until its first park: it
    // is long from the start, and its state is still cheap to copy), so the newcomer waits
    // little. A sequence that only decodes reaches it after
    // 512 tokens: the newcomer parks a more-served one, or waits. Counted in tokens, not time,
    // so the same requests preempt the same way on any machine.
    int32_t quantum = 512;
    // Share of each tick's prompt budget that goes first to the class's prefill that has
    // waited longest (at least one 64-token chunk), e.g. 0.125: a long prompt keeps moving
    // while newcomers arrive every tick. Default 0 (off): the reserve splits a tick's prompt
    // budget over two sequences (one more llama.cpp ubatch, and 64-token chunks when the
    // adaptive budget is down to 128), and the priority bench's agents ran 0.36-0.72x
    // llama-server's tokens/s in 4 of 5 loaded runs with it. Without it a prompt starved by
    // newcomers is still served once aging (aging_ms) makes it a class more urgent.
    double min_share = 0;
};

/** A token count that halves every half-life; read at a time point. */
struct decayed_count {
    double value = 0;
    std::chrono::steady_clock::time_point at{};

    /** The count at `now` (never increases without add()). */
    double at_time(std::chrono::steady_clock::time_point now, int64_t half_life_ms) const;
    /** Decays to `now`, then adds `n`. */
    void add(double n, std::chrono::steady_clock::time_point now, int64_t half_life_ms);
};

/** Where a sequence stands: its client's service first, then its own. Lower is served first. */
struct service_rank {
    double client = 0;
    double seq    = 0;

    friend bool operator<(const service_rank &a, const service_rank &b) {
        return a.client != b.client ? a.client < b.client : a.seq < b.seq;
    }
};

/**
 * The clients' attained service, and each sequence's when given its decayed_count. Tick thread
 * only. Clients whose service decayed below a token are forgotten (prune), so the table stays
 * as small as the set of recently served clients.
 */
class service_ledger {
  public:
    explicit service_ledger(service_options opts) : opts_(opts) {}

    /** Charges `tokens` of service to a sequence and its client. */
    void charge(decayed_count &seq, const std::string &client, int32_t tokens,
                std::chrono::steady_clock::time_point now);
    /** The rank of a sequence of `client` whose own service is `seq`, at `now`. */
    service_rank rank(const decayed_count &seq, const std::string &client,
                      std::chrono::steady_clock::time_point now) const;
    /** Forgets clients whose service fell below one token. */
    void prune(std::chrono::steady_clock::time_point now);
    /** Clients remembered now. */
    size_t clients() const { return clients_.size(); }
    const service_options &options() const { return opts_; }

  private:
    service_options opts_;
    std::unordered_map<std::string, decayed_count> clients_;
};

/**
 * Prompt tokens of a tick reserved for the longest-waiting prefill: `min_share` of the budget
 * in whole quanta, at least one quantum, at most the budget; 0 when min_share <= 0.
 */
int32_t min_share_tokens(double min_share, int32_t prefill_budget, int32_t quantum);

}  // namespace sf
