// Unit tests of the model listings' bodies (api/openai/openai_models.h,
// api/anthropic/anthropic_models.h, api/ollama/ollama_models.h) and Superfluid's status bodies
// (api/superfluid/status_view.h): facts in, JSON text out, no server.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/anthropic/anthropic_models.h"
#include "api/ollama/ollama_models.h"
#include "api/openai/openai_models.h"
#include "api/superfluid/status_view.h"

using namespace sf;
using json = nlohmann::json;

TEST(ModelListing, OpenAIListsEveryIdInOrder) {
    const json j = json::parse(openai_models_body({"a", "org/b:Q4_K_M"}));
    EXPECT_EQ(j["object"], "list");
    ASSERT_EQ(j["data"].size(), 2u);
    EXPECT_EQ(j["data"][1]["id"], "org/b:Q4_K_M");
    EXPECT_EQ(j["data"][1]["object"], "model");
    EXPECT_TRUE(j["data"][0]["created"].is_number_integer());
}

TEST(ModelListing, OpenAISaysWhatAModelReadsOnceKnown) {
    const json plain = json::parse(openai_models_body({"a"}));
    EXPECT_FALSE(plain["data"][0].contains("architecture"));  // not reported yet
    model_description d;
    EXPECT_EQ(input_modalities(d), std::vector<std::string>{"text"});
    d.vision     = true;
    const json j = json::parse(openai_models_body({"a"}, input_modalities(d)));
    EXPECT_EQ(j["data"][0]["architecture"]["input_modalities"], json::array({"text", "image"}));
    EXPECT_EQ(j["data"][0]["architecture"]["output_modalities"], json::array({"text"}));
    d.audio = true;
    EXPECT_EQ(input_modalities(d), (std::vector<std::string>{"text", "image", "audio"}));
}

TEST(ModelListing, AnthropicPagesNameTheirEnds) {
    const json j = json::parse(anthropic_models_body({"a", "b", "c"}));
    EXPECT_EQ(j["data"].size(), 3u);
    EXPECT_EQ(j["data"][0]["type"], "model");
    EXPECT_EQ(j["first_id"], "a");
    EXPECT_EQ(j["last_id"], "c");
    EXPECT_EQ(j["has_more"], false);
    const json none = json::parse(anthropic_models_body({}));
    EXPECT_TRUE(none["first_id"].is_null());
    EXPECT_TRUE(none["data"].empty());
}

TEST(ModelListing, OllamaNamesSizesAndQuantizationAsOllamaDoes) {
    EXPECT_EQ(ollama_quantization_level("Q4_K - Medium"), "Q4_K_M");
    EXPECT_EQ(ollama_quantization_level("Q8_0"), "Q8_0");
    EXPECT_EQ(ollama_parameter_size(7'615'616'512ull), "7.6B");
    EXPECT_EQ(ollama_parameter_size(42'300'000ull), "42.3M");

    model_description d;
    d.architecture    = "qwen3";
    d.n_params        = 596'049'920ull;
    d.file_type       = "Q8_0";
    const auto served = ollama_entry("m:latest", 10, "2026-01-01T00:00:00Z", "ab", &d);
    const auto pulled = ollama_entry("org/r:Q4_K_M", 20, "2026-01-02T00:00:00Z", "cd", nullptr);
    const json j      = json::parse(ollama_tags_body({served, pulled}));
    ASSERT_EQ(j["models"].size(), 2u);
    const json &a = j["models"][0];
    EXPECT_EQ(a["name"], "m:latest");
    EXPECT_EQ(a["model"], "m:latest");
    EXPECT_EQ(a["details"]["family"], "qwen3");
    EXPECT_EQ(a["details"]["families"], json::array({"qwen3"}));
    EXPECT_EQ(a["details"]["parameter_size"], "596.0M");
    EXPECT_EQ(a["details"]["quantization_level"], "Q8_0");
    EXPECT_TRUE(j["models"][1]["details"]["families"].is_null());  // unknown family
}

TEST(ModelListing, OllamaModelRequestsNameTheModel) {
    std::string model;
    bool stream = false;
    api_error err;
    ASSERT_TRUE(parse_ollama_model_request(R"({"model":"a"})", model, stream, err));
    EXPECT_EQ(model, "a");
    EXPECT_TRUE(stream);  // Ollama streams unless told not to
    ASSERT_TRUE(parse_ollama_model_request(R"({"name":"b","stream":false})", model, stream, err));
    EXPECT_EQ(model, "b");
    EXPECT_FALSE(stream);
    EXPECT_FALSE(parse_ollama_model_request("{}", model, stream, err));
    EXPECT_EQ(err.status, 400);
    EXPECT_EQ(err.message, "model is required");
    EXPECT_FALSE(parse_ollama_model_request(R"({"model":3})", model, stream, err));
    EXPECT_NE(err.message.find("model"), std::string::npos);
    EXPECT_FALSE(parse_ollama_model_request("[1]", model, stream, err));
}

TEST(ModelListing, OllamaShowAndPsCarryTheModelsFacts) {
    model_description d;
    d.chat_template = "{% if tools %}{{ tools }}{% endif %}<think>";
    d.metadata      = {{"qwen3.context_length", "40960"}, {"general.name", "tiny"}};
    d.n_params      = 1000;
    const auto m    = ollama_entry("m:latest", 1, "t", "d", &d);
    const json show = json::parse(ollama_show_body(m, d, "m.gguf"));
    EXPECT_EQ(show["model_info"]["qwen3.context_length"], 40960);  // a number, not a string
    EXPECT_EQ(show["model_info"]["general.name"], "tiny");
    EXPECT_EQ(show["capabilities"], json::array({"completion", "tools", "thinking"}));
    d.vision = true;  // a projector that reads images (--mmproj)
    EXPECT_EQ(json::parse(ollama_show_body(m, d, "m.gguf"))["capabilities"],
              json::array({"completion", "vision", "tools", "thinking"}));
    EXPECT_NE(show["modelfile"].get<std::string>().find("FROM m.gguf"), std::string::npos);

    ollama_running_model r;
    r.entry          = m;
    r.context_length = 8192;
    r.parallel       = 4;
    r.ready          = true;
    const json ps    = json::parse(ollama_ps_body({r}, json::array()));
    EXPECT_EQ(ps["models"][0]["context_length"], 8192);
    EXPECT_EQ(ps["models"][0]["worker"]["ready"], true);
    EXPECT_FALSE(ps["models"][0]["worker"].contains("pid"));  // only when the caller may see it
    r.pid = 42;
    EXPECT_EQ(json::parse(ollama_ps_body({r}, json::array()))["models"][0]["worker"]["pid"], 42);
    // On the CPU nothing is in VRAM; with layers offloaded, their share of the file.
    EXPECT_EQ(ps["models"][0]["size_vram"], 0);
    EXPECT_EQ(ps["models"][0]["gpu"]["devices"], "CPU");
    r.entry.size   = 1000;
    r.devices      = "Vulkan0 (test)";
    r.gpu_layers   = 3;
    r.n_layers     = 4;
    const json gpu = json::parse(ollama_ps_body({r}, json::array()))["models"][0];
    EXPECT_EQ(gpu["size_vram"], 750);
    EXPECT_EQ(gpu["gpu"]["layers"], 3);
    EXPECT_EQ(gpu["gpu"]["of"], 4);
    EXPECT_EQ(gpu["gpu"]["devices"], "Vulkan0 (test)");
}

TEST(ModelListing, PullLinesAreOneJsonObjectEach) {
    const std::string p = ollama_progress_line("sha256:ab", 100, 50);
    ASSERT_EQ(p.back(), '\n');
    const json j = json::parse(p);
    EXPECT_EQ(j["status"], "downloading sha256:ab");
    EXPECT_EQ(j["completed"], 50);
    EXPECT_EQ(json::parse(ollama_error_line("gone"))["error"], "gone");
    EXPECT_EQ(json::parse(ollama_status_line("success"))["status"], "success");
}

TEST(StatusView, HealthSaysWhetherTheWorkerIsReady) {
    worker_health h;
    EXPECT_EQ(json::parse(health_body(h))["status"], "unavailable");
    h.reachable = true;
    EXPECT_EQ(json::parse(health_body(h))["status"], "loading");
    h.status.ready = true;
    EXPECT_EQ(json::parse(health_body(h))["status"], "ok");
    EXPECT_EQ(session_ref("sess_x").size(), 16u);
    EXPECT_NE(session_ref("sess_x"), session_ref("sess_y"));
    EXPECT_EQ(metric_number(3), "3.0");
}
