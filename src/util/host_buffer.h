// Host memory for model states (prefix cache entries, parked sequences, disk tier payloads):
// buffers of a few MB that are written once, right after they are allocated, on the path of a
// request's first token.
//
// Why not std::vector<uint8_t>: a vector zero-fills, and fresh memory is faulted in 4 KiB page
// by page. On the 2-core test VM that cost 11-30 ms for one 3.3 MB state (perf: 70 % of the
// worker's page faults were in memset), longer than the prefill it saved. Large buffers here are
// mapped on 2 MiB boundaries with MADV_HUGEPAGE (transparent huge pages, "madvise" mode is the
// common distribution default: 2 faults instead of 800, ~0.3 ms for 4 MB measured), are never
// zero-filled, and go back to a small process-wide pool when released, so the next state of a
// similar size reuses already-faulted memory. The worker also keeps a reserve of such memory
// faulted in ahead of need (keep_reserve): the faults cost the VM 3-4 ms per MB even on huge
// pages, as its free memory is handed back to the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sf {

class host_buffer {
  public:
    host_buffer() = default;
    ~host_buffer();
    host_buffer(host_buffer &&o) noexcept;
    host_buffer &operator=(host_buffer &&o) noexcept;
    host_buffer(const host_buffer &)            = delete;
    host_buffer &operator=(const host_buffer &) = delete;

    /**
     * Makes the buffer `n` bytes long. Contents are unspecified (not zeroed, not kept when the
     * memory changes). Throws std::bad_alloc when no memory can be had.
     */
    void resize(size_t n);
    /** Frees the memory (back to the pool when it came from it). */
    void clear();

    uint8_t *data() { return data_; }
    const uint8_t *data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    /** Bytes of memory held (>= size(): huge-page mappings are whole 2 MiB pages). */
    size_t capacity() const { return cap_; }
    std::span<const uint8_t> span() const { return {data_, size_}; }

    /**
     * Keeps about `bytes` (at most 64 MiB) of faulted-in memory ready in the pool, refilled by
     * a background thread in blocks the size of the latest large request, so a state saved on
     * the tick thread (a prefix cache entry when a sequence ends, a disk-tier copy before a
     * first token) does not wait on page faults. 0 stops refilling.
     */
    static void keep_reserve(size_t bytes);
    /** Unmaps the memory the pool holds (the reserve refills it). */
    static void release_pool();
    /** Bytes the process-wide pool holds for reuse (tests). */
    static size_t pooled_bytes();

  private:
    uint8_t *data_ = nullptr;
    size_t size_   = 0;
    size_t cap_    = 0;
    bool mapped_   = false;  // from mmap (pool-managed) rather than malloc
};

}  // namespace sf
