// A radix tree (compressed trie) over token ids: the index of the prefix cache. Each stored
// entry is a token sequence with a caller-chosen id; a lookup walks a prompt once, so finding
// the longest cached prefix costs O(prompt length), whatever the number of entries.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"

namespace sf::cache {

class radix_tree {
  public:
    radix_tree();
    ~radix_tree();
    radix_tree(const radix_tree &)            = delete;
    radix_tree &operator=(const radix_tree &) = delete;

    /** Stores entry `id` (unique, >= 0) with its tokens. An id already stored is replaced. */
    void insert(int64_t id, std::span<const token_id> tokens);
    /** Removes entry `id`; unknown ids are ignored. */
    void erase(int64_t id);
    /** True when `id` is stored. */
    bool contains(int64_t id) const { return entries_.count(id) != 0; }
    /** The tokens of entry `id` (empty for an unknown id). */
    std::span<const token_id> tokens(int64_t id) const;
    size_t size() const { return entries_.size(); }

    /** What a lookup found for a prompt. */
    struct match {
        // Longest common prefix of the prompt with any entry, and one entry that has it
        // (usable where a prefix of an entry can be reused: attention KV).
        int32_t shared       = 0;
        int64_t shared_entry = -1;
        // Longest entry that is, whole, a prefix of the prompt (usable where only a whole
        // entry can be restored: a recurrent state snapshot).
        int32_t whole       = 0;
        int64_t whole_entry = -1;
    };
    /** Looks `prompt` up, considering at most its first `max_len` tokens. */
    match find(std::span<const token_id> prompt, int32_t max_len) const;

  private:
    struct node;
    void recompute_any(node *n);
    std::unique_ptr<node> root_;
    std::unordered_map<int64_t, std::vector<token_id>> entries_;
};

}  // namespace sf::cache
