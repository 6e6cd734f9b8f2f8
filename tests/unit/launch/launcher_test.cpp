// The context every agent's plan is computed from (launch/launcher.h make_context): where the
// server is, which model it serves, where launch keeps the agent's files.
#include <gtest/gtest.h>

#include "launch/launcher.h"
#include "models/model_ref.h"

using namespace sf::launch;

namespace {

launch_options options(const std::string &model = "") {
    launch_options o;
    o.agent     = "openclaw";
    o.port      = 9123;
    o.model     = model;
    o.priority  = "batch";
    o.state_dir = "/st";
    return o;
}

}  // namespace

TEST(LaunchContext, ARunningServerGivesItsModelAndContext) {
    server_probe s;
    s.up = s.ready   = true;
    s.model_id       = "org/repo:Q8_0";
    s.context_length = 4096;
    const auto *a    = find_agent("openclaw");
    const auto c     = make_context(options("other/repo"), *a, s, "/home/u");
    EXPECT_EQ(c.base_url, "http://127.0.0.1:9123");
    EXPECT_EQ(c.model, "org/repo:Q8_0");  // what the server serves, not what was asked
    EXPECT_EQ(c.context_length, 4096);
    EXPECT_EQ(c.priority, "batch");
    EXPECT_EQ(c.home, "/home/u");
    EXPECT_EQ(c.launch_dir, "/st/launch/openclaw");
}

TEST(LaunchContext, AServerOnEveryAddressIsReachedOnLoopback) {
    auto o = options();
    o.host = "0.0.0.0";
    EXPECT_EQ(make_context(o, *find_agent("claude"), {}, "/h").base_url, "http://127.0.0.1:9123");
    o.host = "192.168.1.7";
    EXPECT_EQ(make_context(o, *find_agent("claude"), {}, "/h").base_url, "http://192.168.1.7:9123");
}

// With no server (--print starts none), agents are told the id `serve` would give the model.
TEST(LaunchContext, WithoutAServerTheModelIsNamedAsServeWouldName) {
    const auto *a = find_agent("claude");
    EXPECT_EQ(make_context(options(), *a, {}, "/h").model, sf::models::kDefaultModel);
    EXPECT_EQ(make_context(options("/models/tiny-qwen3.gguf"), *a, {}, "/h").model, "tiny-qwen3");
    EXPECT_EQ(make_context(options("org/repo:Q4_K_M"), *a, {}, "/h").model, "org/repo:Q4_K_M");
    EXPECT_EQ(make_context(options(), *a, {}, "/h").context_length, 8192);  // the default
}
