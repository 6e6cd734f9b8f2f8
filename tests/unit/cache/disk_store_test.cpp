#include "cache/disk_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace fs = std::filesystem;
using sf::token_id;
using sf::cache::disk_store;

namespace {

struct DiskStore : ::testing::Test {
    fs::path dir = fs::temp_directory_path() /
                   ("sf-disk-test-" + std::to_string(getpid()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    void SetUp() override { fs::remove_all(dir); }
    void TearDown() override { fs::remove_all(dir); }
};

std::vector<token_id> toks(int n, int base) {
    std::vector<token_id> t(n);
    for (int i = 0; i < n; ++i) t[i] = base + i;
    return t;
}

// A payload of `n` bytes, each `v`.
sf::host_buffer bytes_of(size_t n, uint8_t v) {
    sf::host_buffer b;
    b.resize(n);
    std::memset(b.data(), v, n);
    return b;
}

}  // namespace

TEST_F(DiskStore, EntriesSurviveReopeningAndLoadWithTheirPayload) {
    {
        disk_store d(dir.string(), "model-a", 1 << 20);
        d.store(toks(40, 1), bytes_of(1000, 7));
        d.flush();
        EXPECT_EQ(d.stats().entries, 1);
        EXPECT_EQ(d.stats().writes, 1u);
    }
    disk_store d(dir.string(), "model-a", 1 << 20);
    auto p = toks(50, 1);
    auto m = d.find(p, 49);
    EXPECT_EQ(m.whole, 40);
    sf::cache::mapped_payload out;
    ASSERT_TRUE(d.load(m.whole_entry, out));
    EXPECT_EQ(std::vector<uint8_t>(out.payload().begin(), out.payload().end()),
              std::vector<uint8_t>(1000, 7));
    // Another model's directory does not see it.
    disk_store other(dir.string(), "model-b", 1 << 20);
    EXPECT_EQ(other.find(p, 49).whole, 0);
}

// Flips a payload byte of every entry: the header still parses, the checksum does not match.
void corrupt_entries(const fs::path &d) {
    for (const auto &e : fs::directory_iterator(d)) {
        std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(fs::file_size(e.path()) - 100));
        f.put('X');
    }
}

TEST_F(DiskStore, CorruptEntryIsDiscardedAtStartNeverLoaded) {
    {
        disk_store d(dir.string(), "m", 1 << 20);
        d.store(toks(40, 1), bytes_of(1000, 7));
        d.flush();
    }
    corrupt_entries(dir / "m");
    disk_store d(dir.string(), "m", 1 << 20);
    d.flush();  // the start's background verification
    EXPECT_EQ(d.stats().corrupt, 1u);
    EXPECT_EQ(d.find(toks(41, 1), 41).whole, 0);  // gone from the index
    EXPECT_TRUE(fs::is_empty(dir / "m"));         // and from disk
}

// A header whose payload size wraps the size sum around 2^64 so that it "matches" a file too
// short for its digest (before the fix: SIGBUS reading past the mapping): discarded at
// the start, never mapped with a payload running past the file's end.
TEST_F(DiskStore, AHeaderWhosePayloadSizeWrapsAroundIsCorrupt) {
    const auto t           = toks(1, 5);
    const uint32_t version = 1, n = 1;
    const uint64_t file_bytes = 20 + 4 + 4;  // header, token, 4 of the digest's 32 bytes
    const uint64_t payload    = file_bytes - (20 + 4 + 32);  // wraps: 2^64 - 28
    std::string f             = "SFPC";
    f.append(reinterpret_cast<const char *>(&version), 4);
    f.append(reinterpret_cast<const char *>(&n), 4);
    f.append(reinterpret_cast<const char *>(&payload), 8);
    f.append(reinterpret_cast<const char *>(t.data()), 4);
    f.append(4, 'x');
    fs::create_directories(dir / "m");
    std::ofstream(dir / "m" / sf::cache::entry_file_name(t), std::ios::binary) << f;
    disk_store d(dir.string(), "m", 1 << 20);
    d.flush();
    EXPECT_EQ(d.stats().corrupt, 1u);
    EXPECT_EQ(d.find(toks(2, 5), 2).whole, 0);
    EXPECT_TRUE(fs::is_empty(dir / "m"));
}

TEST_F(DiskStore, EntryCorruptedAfterTheStartIsDiscardedWhenLoaded) {
    {
        disk_store d(dir.string(), "m", 1 << 20);
        d.store(toks(40, 1), bytes_of(1000, 7));
        d.flush();
    }
    disk_store d(dir.string(), "m", 1 << 20);
    d.flush();  // verified at start
    auto m = d.find(toks(41, 1), 41);
    ASSERT_EQ(m.whole, 40);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a later mtime
    corrupt_entries(dir / "m");
    sf::cache::mapped_payload out;
    EXPECT_FALSE(d.load(m.whole_entry, out));
    EXPECT_TRUE(out.payload().empty());
    EXPECT_EQ(d.stats().corrupt, 1u);
    EXPECT_EQ(d.find(toks(41, 1), 41).whole, 0);
    EXPECT_TRUE(fs::is_empty(dir / "m"));
}

TEST_F(DiskStore, StaysWithinItsSizeBound) {
    disk_store d(dir.string(), "m", 5000);
    for (int i = 0; i < 10; ++i) {
        d.store(toks(40, 1000 * i), bytes_of(1500, 1));
        d.flush();
        EXPECT_LE(d.stats().bytes, 5000);
    }
    EXPECT_GT(d.stats().evicted, 0u);
    // The newest survives.
    EXPECT_EQ(d.find(toks(40, 9000), 40).whole, 40);
}
