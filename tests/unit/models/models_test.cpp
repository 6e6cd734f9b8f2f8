// Model names and quantization choice (models/model_ref.h, models/quant_selector.h).
#include <gtest/gtest.h>

#include "models/hub_listing.h"
#include "models/model_ref.h"
#include "models/quant_selector.h"

using namespace sf::models;

TEST(ModelRef, ParsesRepoTagAndRevision) {
    auto r = parse_model_ref("unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL@refs/pr/1");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->repo, "unsloth/Qwen3-8B-GGUF");
    EXPECT_EQ(r->tag, "UD-Q4_K_XL");
    EXPECT_EQ(r->revision, "refs/pr/1");
    EXPECT_EQ(r->display(), "unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL@refs/pr/1");
    auto plain = parse_model_ref("Qwen/Qwen3-0.6B-GGUF");
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->tag, "");
    EXPECT_EQ(plain->rev(), "main");
}

TEST(ModelRef, RejectsWhatIsNotARepository) {
    for (const char *s :
         {"", "model.gguf", "a/b/c", "/a", "a/", "org/repo:", "org/repo@", "org/re po", "../x"})
        EXPECT_FALSE(parse_model_ref(s)) << s;
    EXPECT_TRUE(is_local_model_path("models/x.gguf"));
    EXPECT_TRUE(is_local_model_path("./org/repo"));
    EXPECT_FALSE(is_local_model_path("org/repo-that-is-not-here:Q4_K_M"));
}

// Issue #38: a revision names a folder under the model cache (refs/<rev>), so one that climbs
// out of it ("../") or is not a git ref name is refused before anything is fetched or written.
TEST(ModelRef, RevisionsAreGitRefNamesThatStayInTheCache) {
    for (const char *s :
         {"org/repo@../../x", "org/repo:Q4_K_M@../../../tmp/evil", "org/repo@a/../b", "org/repo@..",
          "org/repo@.hidden", "org/repo@a/.b", "org/repo@/abs", "org/repo@a//b", "org/repo@a/",
          "org/repo@x.lock", "org/repo@a\\b", "org/repo@a~1", "org/repo@a^", "org/repo@a*",
          "org/repo@a?", "org/repo@a[", "org/repo@x@{1}", "org/repo@tab\tx", "org/repo@end."})
        EXPECT_FALSE(parse_model_ref(s)) << s;
    for (const char *s : {"org/repo@main", "org/repo@refs/pr/1", "org/repo:Q4_K_M@v1.0",
                          "org/repo@0123456789abcdef0123456789abcdef01234567"})
        EXPECT_TRUE(parse_model_ref(s)) << s;
}

TEST(QuantSelector, ReadsQuantFromFileNames) {
    EXPECT_EQ(quant_of("Qwen3-0.6B-Q4_K_M.gguf"), "Q4_K_M");
    EXPECT_EQ(quant_of("Qwen3-8B-UD-Q4_K_XL.gguf"), "UD-Q4_K_XL");
    EXPECT_EQ(quant_of("Q4_K_M/Big-Q4_K_M-00002-of-00003.gguf"), "Q4_K_M");
    EXPECT_EQ(quant_of("llama-2-7b.Q8_0.gguf"), "Q8_0");
    EXPECT_EQ(quant_of("model-IQ4_XS.gguf"), "IQ4_XS");
    EXPECT_EQ(quant_of("model-bf16.gguf"), "bf16");
    EXPECT_EQ(quant_of("model.gguf"), "");
}

static std::vector<repo_file> files(std::initializer_list<const char *> paths) {
    std::vector<repo_file> v;
    for (auto p : paths) v.push_back({p, 10, "ab", ""});
    return v;
}

TEST(QuantSelector, TagMatchesCaseInsensitivelyAndShardsStayTogether) {
    auto fs = files({"m-Q8_0.gguf", "mmproj-m-F16.gguf", "Q4_K_M/m-Q4_K_M-00002-of-00002.gguf",
                     "Q4_K_M/m-Q4_K_M-00001-of-00002.gguf", "README.md"});
    gguf_group g;
    std::string err;
    ASSERT_TRUE(select_quant(fs, "q4_k_m", "o/r", g, err)) << err;
    ASSERT_EQ(g.files.size(), 2u);
    EXPECT_EQ(g.files[0].path, "Q4_K_M/m-Q4_K_M-00001-of-00002.gguf");
    EXPECT_EQ(g.total_size(), 20u);
    // Default order: Q4_K_M before Q8_0; projectors are never models.
    ASSERT_TRUE(select_quant(fs, "", "o/r", g, err));
    EXPECT_EQ(g.quant, "Q4_K_M");
    EXPECT_FALSE(select_quant(fs, "F16", "o/r", g, err));
    EXPECT_EQ(err,
              "no GGUF file in o/r matches the tag \"F16\"; available quantizations: Q4_K_M, "
              "Q8_0");
}

TEST(QuantSelector, NoGgufNamesTheSafetensorsCase) {
    gguf_group g;
    std::string err;
    EXPECT_FALSE(select_quant(files({"config.json", "model.safetensors"}), "", "mlx/x", g, err));
    EXPECT_NE(err.find("mlx/x has no GGUF file (it holds safetensors weights"), std::string::npos);
}

// A listing page is bytes from a remote server: what it keeps must be safe to use as file names
// (the blob is named by its digest, the link by its path), and nothing in it may throw.
TEST(HubListing, KeepsOnlyFilesWithSafePathsAndHexDigests) {
    const std::string sha(64, 'a'), oid(40, 'b');
    const std::string body = R"([
      {"type":"file","path":"m.gguf","size":5,"oid":")" +
                             oid + R"(","lfs":{"oid":")" + sha +
                             R"(","size":7}},
      {"type":"file","path":"README.md","size":3,"oid":")" +
                             oid + R"("},
      {"type":"file","path":"x.gguf","oid":")" +
                             oid + R"(","lfs":{"oid":"../../../../tmp/owned"}},
      {"type":"file","path":"y.md","oid":"../z"},
      {"type":"file","path":"../escape.gguf","oid":")" +
                             oid + R"("},
      {"type":"file","path":7,"size":"big","oid":")" +
                             oid + R"("},
      {"type":"directory","path":"sub"},
      {"type":["file"]}, 3, null
    ])";
    std::vector<sf::models::repo_file> files;
    ASSERT_TRUE(sf::models::parse_tree_page(body, files));
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files[0].path, "m.gguf");
    EXPECT_EQ(files[0].size, 7u);  // the LFS object's size
    EXPECT_EQ(files[0].etag(), sha);
    EXPECT_EQ(files[1].path, "README.md");
    EXPECT_EQ(files[1].etag(), oid);
}

TEST(HubListing, ANonArrayIsUnreadableAndNeverThrows) {
    std::vector<sf::models::repo_file> files;
    EXPECT_FALSE(sf::models::parse_tree_page("{\"type\":\"file\"}", files));
    EXPECT_FALSE(sf::models::parse_tree_page("[{", files));
    EXPECT_FALSE(sf::models::parse_tree_page("", files));
    EXPECT_TRUE(files.empty());
}

TEST(HubListing, NextPageLinkReadsRelNextOnly) {
    using sf::models::next_page_link;
    EXPECT_EQ(next_page_link(R"(<https://h/api/x?cursor=2>; rel="next")"),
              "https://h/api/x?cursor=2");
    EXPECT_EQ(next_page_link(R"(<https://h/p>; rel="prev", <https://h/n>; rel="next")"),
              "https://h/n");
    EXPECT_EQ(next_page_link(R"(<https://h/p>; rel="prev")"), "");
    EXPECT_EQ(next_page_link(R"(rel="next")"), "");
    EXPECT_EQ(next_page_link(R"(<https://h/p; rel="next")"), "");
}
