#include "bench/overhead.h"

#include <thread>

#include <cpp-httplib/httplib.h>

#include "bench/http_client.h"
#include "bench/stats.h"

namespace sf::bench {

nlohmann::json measure_overhead(int requests) {
    std::string sse;
    for (int i = 0; i < 16; ++i) {
        nlohmann::json c = {{"choices", {{{"index", 0}, {"delta", {{"content", "tok "}}}}}}};
        sse += "data: " + c.dump() + "\n\n";
    }
    nlohmann::json u = {{"choices", nlohmann::json::array()},
                        {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 16}}}};
    sse += "data: " + u.dump() + "\n\ndata: [DONE]\n\n";

    httplib::Server stub;
    stub.Post("/v1/chat/completions", [&](const httplib::Request &, httplib::Response &res) {
        res.set_content(sse, "text/event-stream");
    });
    int port = stub.bind_to_any_port("127.0.0.1");
    std::thread th([&] { stub.listen_after_bind(); });
    stub.wait_until_ready();
    std::string base    = "http://127.0.0.1:" + std::to_string(port);
    nlohmann::json msgs = {{{"role", "user"}, {"content", "hi"}}};
    std::vector<double> ttft, total;
    request_options ro;
    for (int i = 0; i < requests + 3; ++i) {
        stream_result r = post_chat_stream(base, chat_body(msgs, 16), ro);
        if (i < 3 || !r.ok) continue;  // the first few warm the client up
        ttft.push_back(r.ttft_s);
        total.push_back(r.total_s);
    }
    stub.stop();
    th.join();
    return {{"requests", ttft.size()},
            {"ttft_s", summarize(ttft)},
            {"total_s", summarize(total)},
            {"method",
             "in-process stub on 127.0.0.1 streaming 16 chunks at once; "
             "one new connection per request, as in the scenarios"}};
}

}  // namespace sf::bench
