// The harness's own overhead: requests against an in-process stub that answers instantly.
#pragma once

#include <nlohmann/json.hpp>

namespace sf::bench {

/**
 * Starts a stub OpenAI server on loopback that streams a fixed 16-chunk answer at once, sends
 * it `requests` requests through the bench's client, and returns
 * {"requests","ttft_s","total_s"} (each ttft/total as {"median","min","max"}).
 */
nlohmann::json measure_overhead(int requests = 50);

}  // namespace sf::bench
