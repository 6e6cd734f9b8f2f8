// superfluid: the command line. Subcommands: serve (the head), worker (started by the head).
#include <CLI/CLI.hpp>

#include "cli/serve_command.h"
#include "worker/worker_main.h"

int main(int argc, char **argv) {
    CLI::App app{"Superfluid: a local LLM server that decides who gets to speak"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "superfluid 0.1.0 (llama.cpp v0.5.0 de3ff815)");

    sf::serve_options so;
    auto *serve = app.add_subcommand("serve", "Serve a GGUF model over the OpenAI API on one port");
    serve->add_option("model", so.model,
                      "Path to a .gguf model (default: the embedded test model)");
    serve->add_option("--host", so.host, "Address to listen on")->capture_default_str();
    serve->add_option("--port", so.port, "Port to listen on")
        ->capture_default_str()
        ->check(CLI::Range(1, 65535));
    serve->add_option("--ctx-size,-c", so.ctx_size, "Context per sequence, in tokens")
        ->capture_default_str()
        ->check(CLI::Range(64, 1 << 20));
    serve->add_option("--parallel", so.parallel, "Concurrent sequences")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    serve->add_option("--batch-size,-b", so.batch_size, "Tokens per scheduler tick")
        ->capture_default_str()
        ->check(CLI::Range(16, 8192));
    serve
        ->add_option("--prefill-chunk", so.prefill_chunk,
                     "Most prompt tokens one sequence gets per tick")
        ->capture_default_str()
        ->check(CLI::Range(1, 8192));
    serve->add_option("--threads,-t", so.threads, "CPU threads for inference (0 = all)")
        ->capture_default_str();
    serve->add_option("--http-threads", so.http_threads, "Concurrent HTTP connections")
        ->capture_default_str()
        ->check(CLI::Range(4, 4096));
    serve
        ->add_option("--max-body-bytes", so.max_body_bytes,
                     "Largest accepted request body (larger: 413)")
        ->capture_default_str();
    serve->add_option("--state-dir", so.state_dir,
                      "State directory (default: $XDG_STATE_HOME/superfluid)");

    sf::worker_options wo;
    auto *worker = app.add_subcommand("worker", "Run an inference worker (started by `serve`)");
    worker->add_option("--model", wo.engine.model_path, "Path to the .gguf model")->required();
    worker->add_option("--socket", wo.socket_path, "Unix socket to listen on")->required();
    worker->add_option("--ctx-size", wo.engine.ctx_size, "Context per sequence, in tokens");
    worker->add_option("--parallel", wo.engine.parallel, "Concurrent sequences");
    worker->add_option("--batch-size", wo.engine.batch_size, "Tokens per tick");
    worker->add_option("--prefill-chunk", wo.prefill_chunk, "Prompt tokens per sequence per tick");
    worker->add_option("--threads", wo.engine.threads, "CPU threads (0 = all)");

    CLI11_PARSE(app, argc, argv);
    if (*serve) return sf::run_serve(so);
    if (*worker) return sf::run_worker(wo);
    return 2;
}
