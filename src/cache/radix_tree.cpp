#include "cache/radix_tree.h"

#include <algorithm>

namespace sf::cache {

struct radix_tree::node {
    std::vector<token_id> edge;  // tokens from the parent to this node
    std::unordered_map<token_id, std::unique_ptr<node>> children;  // by first edge token
    std::vector<int64_t> ends;  // entries whose tokens end exactly here
    int64_t any  = -1;          // some entry in this subtree (all of them pass through here)
    node *parent = nullptr;
};

radix_tree::radix_tree() : root_(std::make_unique<node>()) {}
radix_tree::~radix_tree() = default;

std::span<const token_id> radix_tree::tokens(int64_t id) const {
    auto it = entries_.find(id);
    if (it == entries_.end()) return {};
    return it->second;
}

void radix_tree::insert(int64_t id, std::span<const token_id> tokens) {
    if (tokens.empty() || id < 0) return;
    erase(id);
    entries_[id].assign(tokens.begin(), tokens.end());
    node *n  = root_.get();
    size_t i = 0;
    for (;;) {
        if (n->any < 0) n->any = id;
        if (i == tokens.size()) {
            n->ends.push_back(id);
            return;
        }
        auto it = n->children.find(tokens[i]);
        if (it == n->children.end()) {
            auto c    = std::make_unique<node>();
            c->edge   = std::vector<token_id>(tokens.begin() + i, tokens.end());
            c->any    = id;
            c->parent = n;
            c->ends.push_back(id);
            n->children.emplace(tokens[i], std::move(c));
            return;
        }
        node *c  = it->second.get();
        size_t k = 0;
        while (k < c->edge.size() && i + k < tokens.size() && c->edge[k] == tokens[i + k]) ++k;
        if (k < c->edge.size()) {
            // Split the edge at k: a new middle node takes the common part.
            auto mid                  = std::make_unique<node>();
            mid->edge                 = std::vector<token_id>(c->edge.begin(), c->edge.begin() + k);
            mid->any                  = c->any;
            mid->parent               = n;
            std::unique_ptr<node> old = std::move(it->second);
            old->edge.erase(old->edge.begin(), old->edge.begin() + k);
            old->parent = mid.get();
            mid->children.emplace(old->edge.front(), std::move(old));
            c          = mid.get();
            it->second = std::move(mid);
        }
        n = c;
        i += k;
    }
}

void radix_tree::recompute_any(node *n) {
    n->any = n->ends.empty() ? -1 : n->ends.front();
    for (auto &[t, c] : n->children) {
        if (n->any >= 0) break;
        n->any = c->any;
    }
}

void radix_tree::erase(int64_t id) {
    auto e = entries_.find(id);
    if (e == entries_.end()) return;
    const std::vector<token_id> tokens = std::move(e->second);
    entries_.erase(e);
    // Walk down to the node where the entry ends.
    node *n  = root_.get();
    size_t i = 0;
    while (i < tokens.size()) {
        auto it = n->children.find(tokens[i]);
        if (it == n->children.end()) return;  // not reachable: the tree is consistent
        n = it->second.get();
        i += n->edge.size();
    }
    n->ends.erase(std::remove(n->ends.begin(), n->ends.end(), id), n->ends.end());
    // Back up: prune empty leaves, fix `any` on the way.
    while (n != root_.get()) {
        node *p = n->parent;
        if (n->ends.empty() && n->children.empty()) {
            p->children.erase(n->edge.front());
        } else {
            recompute_any(n);
        }
        n = p;
    }
    recompute_any(root_.get());
}

radix_tree::match radix_tree::find(std::span<const token_id> prompt, int32_t max_len) const {
    match m;
    const size_t limit = std::min(prompt.size(), static_cast<size_t>(std::max(max_len, 0)));
    const node *n      = root_.get();
    size_t i           = 0;
    for (;;) {
        if (!n->ends.empty()) {
            m.whole       = static_cast<int32_t>(i);
            m.whole_entry = n->ends.front();
        }
        if (i >= limit) break;
        auto it = n->children.find(prompt[i]);
        if (it == n->children.end()) break;
        const node *c = it->second.get();
        size_t k      = 0;
        while (k < c->edge.size() && i + k < limit && c->edge[k] == prompt[i + k]) ++k;
        m.shared       = static_cast<int32_t>(i + k);
        m.shared_entry = c->any;
        if (k < c->edge.size()) break;
        n = c;
        i += k;
    }
    return m;
}

}  // namespace sf::cache
