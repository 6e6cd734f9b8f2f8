#include "placement/prefix_affinity.h"

#include <functional>
#include <string>
#include <string_view>

namespace sf {

namespace {

// The request as one text whose prefixes are the prefixes of the conversation: fields are
// separated by unit separators, messages ended by record separators.
std::string request_text(const generate_request &r) {
    if (!r.is_chat) return r.prompt;
    std::string t;
    for (const auto &tool : r.chat.tools) {
        t += tool.name + '\x1f' + tool.description + '\x1f' + tool.parameters + '\x1e';
    }
    t += '\x1d';
    for (const auto &m : r.messages) {
        t += m.role + '\x1f' + m.name + '\x1f' + m.content + '\x1f' + m.reasoning_content + '\x1f';
        for (const auto &c : m.tool_calls) t += c.id + '\x1f' + c.name + '\x1f' + c.arguments;
        t += '\x1f' + m.tool_call_id + '\x1e';
    }
    return t;
}

}  // namespace

std::vector<uint64_t> prefix_chain(const generate_request &r) {
    const std::string text = request_text(r);
    std::vector<uint64_t> chain;
    chain.reserve(text.size() / k_affinity_chunk_bytes);
    uint64_t h = 0;
    for (size_t at = 0; at + k_affinity_chunk_bytes <= text.size(); at += k_affinity_chunk_bytes) {
        const uint64_t c = std::hash<std::string_view>{}(
            std::string_view(text).substr(at, k_affinity_chunk_bytes));
        // boost::hash_combine's mixing step, widened to 64 bits.
        h ^= c + 0x9e3779b97f4a7c15ULL + (h << 12) + (h >> 4);
        chain.push_back(h);
    }
    return chain;
}

void affinity_index::record(uint64_t node, const std::vector<uint64_t> &chain) {
    node_entries &n = nodes_[node];
    for (uint64_t e : chain) {
        auto it = n.where.find(e);
        if (it != n.where.end()) n.order.erase(it->second);
        n.order.push_front(e);
        n.where[e] = n.order.begin();
    }
    while (n.order.size() > capacity_) {
        n.where.erase(n.order.back());
        n.order.pop_back();
    }
}

size_t affinity_index::match(uint64_t node, const std::vector<uint64_t> &chain) const {
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return 0;
    size_t k = 0;
    while (k < chain.size() && it->second.where.count(chain[k])) ++k;
    return k;
}

}  // namespace sf
