#include "util/host_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

namespace sf {

namespace {

constexpr size_t k_huge = size_t(2) << 20;  // x86-64 and arm64 (4 KiB base pages) THP size
// From this size on a buffer is mapped on huge pages; below, malloc's pages are as good.
constexpr size_t k_map_from = size_t(1) << 20;
// Released mappings kept for reuse, in bytes: a few states' worth.
constexpr size_t k_pool_limit = size_t(64) << 20;
// The reserve's blocks: at least this, or the latest request's size when larger.
constexpr size_t k_refill_block = size_t(4) << 20;

struct pool {
    std::mutex mu;
    std::condition_variable low;         // the reserve fell under its target
    std::multimap<size_t, void *> free;  // capacity -> mapping
    size_t bytes    = 0;
    size_t reserve  = 0;      // keep_reserve()'s target, bytes
    size_t last_cap = 0;      // the latest mapped request, the reserve's block size
    bool refilling  = false;  // the refill thread runs
};

pool &the_pool() {
    static pool *p = new pool;  // never destroyed: buffers may be released during exit
    return *p;
}

size_t round_up(size_t n, size_t to) {
    return (n + to - 1) / to * to;
}

// An anonymous mapping of `cap` bytes (a multiple of k_huge) starting on a k_huge boundary.
void *map_huge(size_t cap) {
    const size_t span = cap + k_huge;
    void *raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    auto base       = reinterpret_cast<uintptr_t>(raw);
    uintptr_t start = (base + k_huge - 1) & ~(uintptr_t(k_huge) - 1);
    if (start > base) ::munmap(raw, start - base);
    const uintptr_t end = start + cap;
    if (base + span > end) ::munmap(reinterpret_cast<void *>(end), base + span - end);
    // Advice only: without THP ("never") the buffer is plain pages.
    ::madvise(reinterpret_cast<void *>(start), cap, MADV_HUGEPAGE);
    return reinterpret_cast<void *>(start);
}

// `cap` bytes (a multiple of k_huge): the smallest pooled mapping that holds it, its tail beyond
// `cap` split off back into the pool; or a fresh mapping.
void *take(size_t cap) {
    auto &p = the_pool();
    {
        std::lock_guard lk(p.mu);
        p.last_cap = cap;
        auto it    = p.free.lower_bound(cap);
        if (it != p.free.end()) {
            const size_t have = it->first;
            auto *m           = static_cast<uint8_t *>(it->second);
            p.free.erase(it);
            p.bytes -= cap;
            if (have > cap) p.free.emplace(have - cap, m + cap);
            if (p.bytes < p.reserve) p.low.notify_one();
            return m;
        }
    }
    // States have outgrown the pooled mappings: make room for ones of today's size.
    if (p.reserve > 0) host_buffer::release_pool();
    return map_huge(cap);
}

// Keeps the pool at its reserve: maps blocks of the latest request's size and writes one byte
// per 4 KiB page, so the faults happen here and not on the thread that needs the memory.
void refill_loop() {
    auto &p = the_pool();
    std::unique_lock lk(p.mu);
    for (;;) {
        p.low.wait(lk, [&] { return p.bytes < p.reserve; });
        const size_t block = std::min(std::max(p.last_cap, k_refill_block), p.reserve);
        lk.unlock();
        auto *m = static_cast<uint8_t *>(map_huge(block));
        if (m) {
            for (size_t off = 0; off < block; off += 4096) m[off] = 0;
        }
        lk.lock();
        if (!m) {
            p.reserve = 0;  // out of memory: stop trying
            continue;
        }
        p.free.emplace(block, m);
        p.bytes += block;
    }
}

void give_back(void *m, size_t cap) {
    auto &p = the_pool();
    {
        std::lock_guard lk(p.mu);
        if (p.bytes + cap <= k_pool_limit) {
            p.free.emplace(cap, m);
            p.bytes += cap;
            return;
        }
    }
    ::munmap(m, cap);
}

}  // namespace

host_buffer::~host_buffer() {
    clear();
}

host_buffer::host_buffer(host_buffer &&o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      cap_(std::exchange(o.cap_, 0)),
      mapped_(std::exchange(o.mapped_, false)) {}

host_buffer &host_buffer::operator=(host_buffer &&o) noexcept {
    if (this != &o) {
        clear();
        data_   = std::exchange(o.data_, nullptr);
        size_   = std::exchange(o.size_, 0);
        cap_    = std::exchange(o.cap_, 0);
        mapped_ = std::exchange(o.mapped_, false);
    }
    return *this;
}

void host_buffer::resize(size_t n) {
    if (n <= cap_) {
        size_ = n;
        return;
    }
    clear();
    if (n >= k_map_from) {
        const size_t cap = round_up(n, k_huge);
        void *m          = take(cap);
        if (!m) throw std::bad_alloc();
        data_   = static_cast<uint8_t *>(m);
        cap_    = cap;
        mapped_ = true;
    } else {
        data_ = static_cast<uint8_t *>(std::malloc(n));
        if (!data_) throw std::bad_alloc();
        cap_ = n;
    }
    size_ = n;
}

void host_buffer::clear() {
    if (data_) {
        if (mapped_) {
            give_back(data_, cap_);
        } else {
            std::free(data_);
        }
    }
    data_   = nullptr;
    size_   = 0;
    cap_    = 0;
    mapped_ = false;
}

void host_buffer::keep_reserve(size_t bytes) {
    auto &p = the_pool();
    std::lock_guard lk(p.mu);
    p.reserve = std::min(bytes, k_pool_limit);
    if (!p.refilling && p.reserve > 0) {
        p.refilling = true;
        std::thread(refill_loop).detach();  // lives as long as the process
    }
    p.low.notify_one();
}

void host_buffer::release_pool() {
    auto &p = the_pool();
    std::lock_guard lk(p.mu);
    for (auto &[c, m] : p.free) ::munmap(m, c);
    p.free.clear();
    p.bytes = 0;
    if (p.reserve > 0) p.low.notify_one();
}

size_t host_buffer::pooled_bytes() {
    auto &p = the_pool();
    std::lock_guard lk(p.mu);
    return p.bytes;
}

}  // namespace sf
