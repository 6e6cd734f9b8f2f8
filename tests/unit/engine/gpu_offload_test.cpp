// The --gpu-layers and --tensor-split parsers and the offload plan where ggml finds no GPU
// device (this machine's CPU build; the lavapipe runs are tests/integration/gpu_offload).
#include <gtest/gtest.h>
#include <llama.h>

#include "engine/llama/gpu_offload.h"

namespace sf {

TEST(GpuOffload, ParsesLayerCountsAutoAndAll) {
    int32_t n = 7;
    EXPECT_TRUE(parse_gpu_layers("auto", n));
    EXPECT_EQ(n, -1);
    EXPECT_TRUE(parse_gpu_layers("0", n));
    EXPECT_EQ(n, 0);
    EXPECT_TRUE(parse_gpu_layers("33", n));
    EXPECT_EQ(n, 33);
    EXPECT_TRUE(parse_gpu_layers("all", n));
    EXPECT_GT(n, 1000);
    for (const char *bad : {"", "-1", "3x", "x", "1.5", " 2"}) {
        n = 5;
        EXPECT_FALSE(parse_gpu_layers(bad, n)) << bad;
        EXPECT_EQ(n, 5) << "unchanged on error: " << bad;
    }
}

TEST(GpuOffload, ParsesTensorSplits) {
    std::vector<float> split;
    EXPECT_TRUE(parse_tensor_split("3,1", split));
    EXPECT_EQ(split, (std::vector<float>{3, 1}));
    EXPECT_TRUE(parse_tensor_split("1/1/2", split));  // llama-server accepts either separator
    EXPECT_EQ(split.size(), 3u);
    for (const char *bad : {"", "1,", ",1", "a,b", "-1,2", "1;2"})
        EXPECT_FALSE(parse_tensor_split(bad, split)) << bad;
}

TEST(GpuOffload, WithoutAGpuDeviceEveryLayerStaysOnTheCpu) {
    if (gpu_device_count() > 0) GTEST_SKIP() << "a GPU device is visible: " << gpu_summary();
    llama_model_params mp   = llama_model_default_params();
    llama_context_params cp = llama_context_default_params();
    std::vector<float> split;
    gpu_options g;  // auto
    offload_result r = plan_offload("unused.gguf", g, mp, cp, split);
    EXPECT_EQ(mp.n_gpu_layers, 0);
    EXPECT_EQ(r.devices, "CPU");
    EXPECT_EQ(offload_done(r, 28, mp.n_gpu_layers),
              "offloaded 0/29 layers to no GPU (CPU) (no GPU device)");
    EXPECT_NE(gpu_summary().find("CPU"), std::string::npos);
    EXPECT_EQ(gpu_free_bytes(), 0);
}

}  // namespace sf
