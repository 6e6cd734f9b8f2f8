// GGUF headers read without ggml (models/gguf_info.h): what `superfluid show` prints and the
// training context serve caps --ctx-size at; files that are not GGUF called that.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "mkmodel.h"
#include "models/engine_registry.h"
#include "models/gguf_info.h"

using namespace sf::models;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
    fs::path path = fs::temp_directory_path() / ("sf-gguf-" + std::to_string(getpid()));
    temp_dir() { fs::create_directories(path); }
    ~temp_dir() { fs::remove_all(path); }
    std::string file(const std::string &name, const std::string &bytes) const {
        std::ofstream(path / name, std::ios::binary) << bytes;
        return (path / name).string();
    }
};

}  // namespace

TEST(GgufInfo, ReadsWhatShowPrints) {
    temp_dir t;
    const std::string p = (t.path / "tiny.gguf").string();
    sf::mkmodel::options o;
    o.context_length = 2048;
    ASSERT_EQ(sf::mkmodel::write_model(o, p), "");
    gguf_summary s;
    std::string err;
    ASSERT_TRUE(read_gguf_summary(p, s, err)) << err;
    EXPECT_EQ(s.architecture, "qwen3");
    EXPECT_EQ(s.context_length, 2048u);
    EXPECT_EQ(s.embedding_length, 64u);
    EXPECT_EQ(s.block_count, 2u);
    EXPECT_EQ(s.quantization, "F16");  // mkmodel's general.file_type
    // Token embedding 151,936 x 64 alone is 9.7 M; the two small layers add little.
    EXPECT_GT(s.parameters, 9700000u);
    EXPECT_LT(s.parameters, 11000000u);
    EXPECT_EQ(check_runnable(p), "");
}

TEST(GgufInfo, AFileThatIsNotGgufIsCalledThat) {
    temp_dir t;
    const std::string zip = t.file("model.gguf", std::string("PK\x03\x04 not a model"));
    EXPECT_EQ(gguf_magic_problem(zip),
              "bad magic \"PK\\x03\\x04\"; a GGUF file starts with \"GGUF\"");
    EXPECT_EQ(check_runnable(zip), zip +
                                       " is not a GGUF file (bad magic \"PK\\x03\\x04\"; a GGUF "
                                       "file starts with \"GGUF\"), the one format this build "
                                       "runs (llama.cpp)");
    gguf_summary s;
    std::string err;
    EXPECT_FALSE(read_gguf_summary(zip, s, err));
    EXPECT_EQ(err, zip +
                       " is not a GGUF file (bad magic \"PK\\x03\\x04\"; a GGUF file starts "
                       "with \"GGUF\")");
    EXPECT_EQ(gguf_magic_problem(t.file("empty.gguf", "")), "empty");
    EXPECT_EQ(gguf_magic_problem(t.file("short.gguf", "GG")),
              "2 bytes, shorter than a GGUF header");
    // The magic, then nothing: a truncated header, not a crash.
    EXPECT_FALSE(read_gguf_summary(t.file("cut.gguf", "GGUF\x03"), s, err));
    EXPECT_NE(err.find("truncated header"), std::string::npos) << err;
    fs::create_directories(t.path / "dir");
    EXPECT_NE(check_runnable((t.path / "dir").string()).find("is a directory with no model"),
              std::string::npos);
}

TEST(GgufInfo, NamesAsOllamaPrintsThem) {
    EXPECT_EQ(gguf_file_type_name(15), "Q4_K_M");
    EXPECT_EQ(gguf_file_type_name(7), "Q8_0");
    EXPECT_EQ(gguf_file_type_name(32), "BF16");
    EXPECT_EQ(gguf_file_type_name(5), "file type 5");
    EXPECT_EQ(format_parameter_count(596049920), "596.05M");
    EXPECT_EQ(format_parameter_count(8190735360), "8.19B");
    EXPECT_EQ(format_parameter_count(751630), "751.63K");
    EXPECT_EQ(format_parameter_count(12), "12");
}
