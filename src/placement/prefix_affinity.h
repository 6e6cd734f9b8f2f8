// Which node holds the longest cached prefix of a new session's prompt (issue #17, prefix
// affinity), as the head can know it without tokenizing: the request's text (tools, then each
// message in order, or a completion's prompt) cut into fixed-size chunks, each chunk's hash
// chained to the previous one, so equal chain entries mean equal text up to there. The head
// records the chain of every session it places on a node; a new session's match on a node is
// how many leading chunks of its chain that node was given before. A conversation's second
// turn extends its first turn's text, so it matches the node that ran the first turn — the
// node whose prefix cache holds it. This is SGLang's router's approximate cache tree, with
// chunk hashes in place of a character radix tree.
//
// Not thread-safe: node_pool calls it under its mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "core/generate_request.h"

namespace sf {

/** Bytes of request text per chunk: about 128 tokens of English, a fraction of one turn. */
inline constexpr size_t k_affinity_chunk_bytes = 512;

/**
 * The chained chunk hashes of `r`'s text: entry k hashes chunks 0..k (k_affinity_chunk_bytes
 * each; a last partial chunk is left out, so text still being extended matches). Chat: the
 * tools' names, descriptions and schemas, then per message its role, content, reasoning and
 * tool calls; completion: the prompt. The hash is std::hash over the chunk bytes mixed with the
 * previous entry: not cryptographic, a collision only misplaces a session.
 */
std::vector<uint64_t> prefix_chain(const generate_request &r);

/** Per node, the chain entries of sessions placed there, least recently used dropped first. */
class affinity_index {
  public:
    /** `capacity`: entries kept per node (64 Ki × 512 B ≈ 32 MiB of text per node). */
    explicit affinity_index(size_t capacity = 65536) : capacity_(capacity) {}

    /** Node `node` was given a session with `chain`: it now holds every entry of it. */
    void record(uint64_t node, const std::vector<uint64_t> &chain);
    /** How many leading entries of `chain` node `node` holds (0: none). */
    size_t match(uint64_t node, const std::vector<uint64_t> &chain) const;
    /** Forgets node `node` (its worker restarted or it left: its cache is gone). */
    void forget(uint64_t node) { nodes_.erase(node); }

  private:
    struct node_entries {
        std::list<uint64_t> order;  // most recently used first
        std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
    };
    size_t capacity_;
    std::unordered_map<uint64_t, node_entries> nodes_;
};

}  // namespace sf
