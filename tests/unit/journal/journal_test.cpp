// The journal's store and writer against real SQLite files in a temporary directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include "journal/journal_open.h"
#include "journal/journal_writer.h"

namespace fs = std::filesystem;
using namespace sf;
using namespace sf::journal;

namespace {

struct journal_test : ::testing::Test {
    fs::path dir;
    options opts;
    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("sf-journal-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
        opts.path = (dir / "journal.db").string();
    }
    void TearDown() override { fs::remove_all(dir); }
};

op begin_op(const std::string &id, int64_t created_ms = 1000) {
    op o;
    o.type              = op::kind::BEGIN;
    o.session           = id;
    o.rec.id            = id;
    o.rec.api           = "openai.chat";
    o.rec.model         = "m";
    o.rec.seed          = 0xfedcba9876543210ull;
    o.rec.request       = std::string("\x0a\x03req\x00bytes", 11);
    o.rec.prompt_tokens = 7;
    o.rec.created_ms    = created_ms;
    return o;
}

op token_op(const std::string &id, uint32_t index) {
    op o;
    o.session  = id;
    o.ev.index = index;
    o.ev.token = static_cast<token_id>(100 + index);
    o.ev.piece = "p" + std::to_string(index);
    o.ev.text  = "t" + std::to_string(index);
    return o;
}

op finish_op(const std::string &id, int32_t n, int64_t finished_ms) {
    op o;
    o.type                 = op::kind::FINISH;
    o.session              = id;
    o.ev.type              = session_event::kind::FINISHED;
    o.ev.reason            = finish_reason::LENGTH;
    o.ev.text              = "tail";
    o.ev.completion_tokens = n;
    o.rec.finished_ms      = finished_ms;
    return o;
}

}  // namespace

TEST_F(journal_test, writes_and_reads_back_sessions_and_tokens) {
    store db;
    std::string err;
    ASSERT_TRUE(db.open(opts, err)) << err;
    std::vector<op> ops = {begin_op("a"), token_op("a", 0), token_op("a", 1), begin_op("b"),
                           token_op("b", 0)};
    ASSERT_TRUE(db.write(ops, err)) << err;
    ASSERT_TRUE(db.write({finish_op("a", 2, 5000)}, err)) << err;

    auto a = db.load("a");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->rec.request, std::string("\x0a\x03req\x00bytes", 11));
    EXPECT_EQ(a->rec.seed, 0xfedcba9876543210ull);
    ASSERT_EQ(a->tokens.size(), 2u);
    EXPECT_EQ(a->tokens[1].token, 101);
    EXPECT_EQ(a->tokens[1].text, "t1");
    ASSERT_TRUE(a->finish);
    EXPECT_EQ(a->finish->reason, finish_reason::LENGTH);
    EXPECT_EQ(a->finish->text, "tail");

    auto open = db.unfinished();
    ASSERT_EQ(open.size(), 1u);
    EXPECT_EQ(open[0].rec.id, "b");
    EXPECT_EQ(open[0].tokens.size(), 1u);
    EXPECT_FALSE(db.load("nope"));
}

TEST_F(journal_test, retention_removes_old_finished_sessions_only) {
    opts.max_age_s = 10;
    store db;
    std::string err;
    ASSERT_TRUE(db.open(opts, err)) << err;
    ASSERT_TRUE(db.write({begin_op("old"), finish_op("old", 0, 1000), begin_op("new"),
                          finish_op("new", 0, 50000), begin_op("running")},
                         err));
    EXPECT_EQ(db.prune(20000), 1u);
    EXPECT_FALSE(db.load("old"));
    EXPECT_TRUE(db.load("new"));
    EXPECT_TRUE(db.load("running"));
}

TEST_F(journal_test, a_garbage_file_is_moved_aside_and_a_fresh_journal_started) {
    {
        std::ofstream f(opts.path, std::ios::binary);
        f << std::string(8192, 'x');
    }
    auto db = open_journal(opts);
    ASSERT_TRUE(db);
    int aside = 0;
    for (const auto &e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind("journal.db.corrupt-", 0) == 0) ++aside;
    EXPECT_EQ(aside, 1);
    std::string err;
    EXPECT_TRUE(db->write({begin_op("x")}, err)) << err;
}

TEST_F(journal_test, writer_publishes_after_commit_and_refuses_a_failed_session) {
    opts.max_pages = 7;  // a "full disk" after a few dozen tokens
    auto db        = std::make_unique<store>();
    std::string err;
    ASSERT_TRUE(db->open(opts, err)) << err;
    writer w(std::move(db));
    std::promise<bool> began;
    op b   = begin_op("s");
    b.done = [&](bool ok, const std::string &) { began.set_value(ok); };
    w.submit(std::move(b));
    ASSERT_TRUE(began.get_future().get());
    // Tokens with large texts, one commit each, until a commit fails; every later write of
    // the session fails too (its journaled tokens stay contiguous).
    std::vector<int> results;  // 1 ok, 0 failed
    const int n = 120;
    for (int i = 0; i < n; ++i) {
        op t      = token_op("s", static_cast<uint32_t>(i));
        t.ev.text = std::string(200, 'z');
        std::promise<bool> done;
        t.done = [&](bool ok, const std::string &) { done.set_value(ok); };
        w.submit(std::move(t));
        results.push_back(done.get_future().get() ? 1 : 0);
    }
    w.stop();
    size_t first_fail = std::find(results.begin(), results.end(), 0) - results.begin();
    ASSERT_GT(first_fail, 0u);
    ASSERT_LT(first_fail, results.size()) << "the capped journal never filled";
    for (size_t i = first_fail; i < results.size(); ++i) EXPECT_EQ(results[i], 0) << i;
    store check;
    ASSERT_TRUE(check.open(opts, err)) << err;
    auto s = check.load("s");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->tokens.size(), first_fail) << "exactly the acknowledged tokens are journaled";
}

// The leader commit: an idle writer commits on the submitting thread (the callback has run
// when submit returns); under concurrent submitters every write is committed exactly once, in
// order per session; a callback that submits again does not deadlock.
TEST_F(journal_test, writer_commits_inline_when_idle_and_in_order_under_concurrency) {
    auto db = std::make_unique<store>();
    std::string err;
    ASSERT_TRUE(db->open(opts, err)) << err;
    writer w(std::move(db));

    bool done_inline = false;
    op b             = begin_op("solo");
    b.done           = [&](bool ok, const std::string &) { done_inline = ok; };
    w.submit(std::move(b));
    EXPECT_TRUE(done_inline) << "an idle writer commits on the submitting thread";

    // A callback that submits the session's next token (as a pump would on a failure path).
    std::promise<bool> chained;
    op c1   = begin_op("chain");
    c1.done = [&](bool, const std::string &) {
        op t   = token_op("chain", 0);
        t.done = [&](bool ok, const std::string &) { chained.set_value(ok); };
        w.submit(std::move(t));
    };
    w.submit(std::move(c1));
    auto fut = chained.get_future();
    ASSERT_EQ(fut.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(fut.get());

    const int n_threads = 6, n_tokens = 150;
    std::vector<std::vector<uint32_t>> seen(n_threads);
    std::mutex seen_mu;
    std::vector<std::thread> ths;
    for (int k = 0; k < n_threads; ++k) {
        ths.emplace_back([&, k] {
            const std::string id = "s" + std::to_string(k);
            std::promise<void> began;
            op bo   = begin_op(id);
            bo.done = [&](bool, const std::string &) { began.set_value(); };
            w.submit(std::move(bo));
            began.get_future().wait();
            for (int i = 0; i < n_tokens; ++i) {
                op t   = token_op(id, static_cast<uint32_t>(i));
                t.done = [&, k, i](bool ok, const std::string &) {
                    std::lock_guard lk(seen_mu);
                    if (ok) seen[k].push_back(static_cast<uint32_t>(i));
                };
                w.submit(std::move(t));  // no wait: later tokens may join a running commit
            }
        });
    }
    for (auto &t : ths) t.join();
    w.stop();  // runs what is still queued
    store check;
    ASSERT_TRUE(check.open(opts, err)) << err;
    for (int k = 0; k < n_threads; ++k) {
        ASSERT_EQ(seen[k].size(), static_cast<size_t>(n_tokens)) << k;
        for (int i = 0; i < n_tokens; ++i) EXPECT_EQ(seen[k][i], static_cast<uint32_t>(i));
        auto s = check.load("s" + std::to_string(k));
        ASSERT_TRUE(s);
        EXPECT_EQ(s->tokens.size(), static_cast<size_t>(n_tokens));
    }
}
