#include "bench/workload.h"

#include <array>

namespace sf::bench {

namespace {

constexpr std::array<const char *, 96> kWords = {
    "the",   "of",     "and",  "to",   "in",    "is",     "it",    "that", "for",   "was",
    "on",    "are",    "as",   "with", "his",   "they",   "at",    "be",   "this",  "have",
    "from",  "or",     "one",  "had",  "by",    "word",   "but",   "not",  "what",  "all",
    "were",  "we",     "when", "your", "can",   "said",   "there", "use",  "an",    "each",
    "which", "she",    "do",   "how",  "their", "if",     "will",  "up",   "other", "about",
    "out",   "many",   "then", "them", "these", "so",     "some",  "her",  "would", "make",
    "like",  "him",    "into", "time", "has",   "look",   "two",   "more", "write", "go",
    "see",   "number", "no",   "way",  "could", "people", "my",    "than", "first", "water",
    "been",  "call",   "who",  "oil",  "its",   "now",    "find",  "long", "down",  "day",
    "did",   "get",    "come", "made", "may",   "part"};

uint64_t splitmix(uint64_t &s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

}  // namespace

std::string words(uint64_t seed, int n) {
    std::string out;
    out.reserve(static_cast<size_t>(n) * 5);
    uint64_t s = seed * 7919 + 1;
    for (int i = 0; i < n; ++i) {
        if (i) out += ' ';
        out += kWords[splitmix(s) % kWords.size()];
    }
    return out;
}

std::string document(uint64_t seed, int tokens) {
    return "Document " + words(seed ^ 0x5a5a, 3) + "\n\n" +
           words(seed, tokens > 8 ? tokens - 8 : 1);
}

std::string text_of_bytes(uint64_t seed, int bytes) {
    // The words average a little under 4 characters plus a space.
    std::string t = words(seed, bytes / 4 + 1);
    if (static_cast<int>(t.size()) > bytes) {
        t.resize(static_cast<size_t>(bytes));
        auto sp = t.find_last_of(' ');
        if (sp != std::string::npos) t.resize(sp);
    }
    return t;
}

}  // namespace sf::bench
