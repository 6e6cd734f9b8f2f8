// superfluid: the command line. Subcommands: serve (the head), worker (started by the head),
// join / token / nodes (cluster mode), and the client commands.
#include <CLI/CLI.hpp>

#include <filesystem>

#include "api/common/priority.h"
#include "cli/bench_command.h"
#include "cli/cluster_commands.h"
#include "cli/gpu_flags.h"
#include "cli/help_formatter.h"
#include "cli/launch_command.h"
#include "cli/model_commands.h"
#include "cli/ps_command.h"
#include "cli/run_command.h"
#include "cli/serve_command.h"
#include "cli/serve_models.h"
#include "cli/show_command.h"
#include "cli/stop_command.h"
#include "engine/llama/gpu_offload.h"
#include "engine/llama/kv_config.h"
#include "engine/llama/speculation.h"
#include "sf_version.h"  // generated: cmake/version.cmake
#include "worker/worker_main.h"

int main(int argc, char **argv) {
    CLI::App app{"Superfluid: a local LLM server that decides who gets to speak"};
    app.formatter(std::make_shared<sf::help_formatter>());  // before the subcommands: they copy it
    app.require_subcommand(1);
    // The backends and devices only when asked: finding them starts each GPU backend's driver.
    app.set_version_flag("--version", [] {
        return "superfluid " SF_VERSION " (commit " SF_GIT_COMMIT ", llama.cpp " SF_LLAMA_COMMIT
               ")\nbackends: " +
               sf::gpu_summary();
    });

    sf::serve_options so;
    auto *serve = app.add_subcommand("serve", "Serve a GGUF model over the OpenAI API on one port");
    serve->add_option("model", so.models,
                      "Models to serve, each a .gguf file or a hub model org/repo[:TAG][@rev], "
                      "pulled when missing (default: unsloth/Qwen3-0.6B-GGUF:Q4_K_M, offline "
                      "the embedded test model). The first (or --default-model) loads at start "
                      "and answers names no served model has; the others load on first use");
    serve->add_option("--default-model", so.default_model,
                      "Which served model is the default (its id, argument, path or file name)");
    std::string keep_alive = "5m";
    serve
        ->add_option("--keep-alive", keep_alive,
                     "How long a model other than the default stays loaded once idle (Ollama's "
                     "syntax: 5m, 30s, 1h30m; 0: unloaded as soon as idle; -1: never); a "
                     "request's keep_alive (Ollama API) sets it for its model")
        ->capture_default_str()
        ->check([](const std::string &v) {
            std::chrono::milliseconds ms{};
            return sf::parse_keep_alive_flag(v, ms) ? std::string{}
                                                    : "not a duration like 5m, 30s, 0 or -1";
        });
    serve
        ->add_option("--max-models", so.max_models,
                     "Most models loaded at once (0: no limit); a request for another waits until "
                     "a loaded model is idle, which is unloaded (a model with running or waiting "
                     "requests never is)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1024));
    serve->add_option("--host", so.host, "Address to listen on")->capture_default_str();
    serve->add_option("--port", so.port, "Port to listen on")
        ->capture_default_str()
        ->check(CLI::Range(1, 65535));
    serve
        ->add_option("--ctx-size,-c", so.ctx_size,
                     "Most tokens one request may hold, prompt and answer (0: the model's "
                     "training context, as far as the KV memory holds)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1 << 20));
    serve->add_flag("--kv-unified,!--no-kv-unified", so.kv_unified,
                    "One KV pool of --kv-memory that all sequences fill as they hold tokens (a "
                    "shared prefix held once, --ctx-size up to the training context; the "
                    "default). --no-kv-unified: a stream of --ctx-size tokens (default 8,192) "
                    "reserved per sequence");
    serve
        ->add_option("--parallel", so.parallel,
                     "Concurrent sequences (0: --max-seqs, taking cells from one KV pool of "
                     "--kv-memory as they hold tokens)")
        ->capture_default_str()
        ->check(CLI::Range(0, 256));
    serve->add_option("--max-seqs", so.max_seqs, "Most concurrent sequences when --parallel is 0")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    serve
        ->add_option("--kv-memory", so.kv_memory_mib,
                     "MiB of KV cache for all sequences (0: a quarter of the memory available at "
                     "start, at least 8 x 8,192 tokens' worth)")
        ->capture_default_str()
        ->check(CLI::Range(int64_t(0), int64_t(1) << 30));
    serve->add_option("--batch-size,-b", so.batch_size, "Tokens per scheduler tick")
        ->capture_default_str()
        ->check(CLI::Range(16, 8192));
    serve
        ->add_option("--prefill-chunk", so.prefill_chunk,
                     "Most prompt tokens one sequence gets per tick")
        ->capture_default_str()
        ->check(CLI::Range(1, 8192));
    serve
        ->add_option("--tick-ms", so.tick_ms,
                     "Target duration of a tick that carries prompt tokens, ms (bounds how long "
                     "a new interactive request waits for the tick in flight; 0: always "
                     "--batch-size prompt tokens per tick)")
        ->capture_default_str()
        ->check(CLI::Range(0, 10000));
    serve->add_option("--threads,-t", so.threads, "CPU threads for inference (0 = all)")
        ->capture_default_str();
    serve
        ->add_option("--http-threads", so.http_threads,
                     "HTTP requests handled at once (a stream is one for its length); one more "
                     "gets 503 with Retry-After. Idle and slow connections do not count: they "
                     "hold a socket, not a thread")
        ->capture_default_str()
        ->check(CLI::Range(4, 4096));
    serve
        ->add_option("--header-timeout", so.header_timeout_s,
                     "Seconds a request line and its headers may take to arrive, and the slack "
                     "of a body, which must then arrive at 64 KiB/s or faster on average; a "
                     "slower client gets 408 and is closed (nginx's client_header_timeout)")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 3600.0));
    serve->add_option("--api-key", so.api_keys,
                      "Require this key of every API request (Authorization: Bearer KEY or "
                      "x-api-key); repeat for several. Other local users can read it in ps: "
                      "prefer --api-key-file or SUPERFLUID_API_KEY");
    serve->add_option("--api-key-file", so.api_key_file,
                      "Keys to require, one a line ('#' comments), from this file (chmod 600); "
                      "the environment variable SUPERFLUID_API_KEY adds more, comma-separated");
    serve->add_option("--admin-key", so.admin_keys,
                      "An API key whose holder also sees every session's id in /api/ps and "
                      "/ui/events and may read or cancel any session (others: only their own); "
                      "repeatable; prefer --admin-key-file or SUPERFLUID_ADMIN_KEY");
    serve->add_option("--admin-key-file", so.admin_key_file,
                      "Admin keys from this file, one a line (SUPERFLUID_ADMIN_KEY adds more)");
    serve->add_option("--cors-origin", so.cors_origins,
                      "Let web pages of this origin (scheme://host[:port], or * for any) call the "
                      "API; this server's own pages and loopback origins always may; repeatable");
    serve->add_option("--allowed-host", so.allowed_hosts,
                      "Serve requests whose Host header is this name while listening on "
                      "loopback (others: 403, against DNS rebinding); repeatable");
    serve
        ->add_option("--max-body-bytes", so.max_body_bytes,
                     "Largest accepted request body (larger: 413)")
        ->capture_default_str();
    serve->add_option("--state-dir", so.state_dir,
                      "State directory (default: $XDG_STATE_HOME/superfluid)");

    std::string default_priority = "normal";
    serve->add_option("--default-priority", default_priority, "Class of requests that name none")
        ->capture_default_str()
        ->check(CLI::IsMember(sf::class_name_list()));
    serve->add_flag("--strict-model-names", so.strict_model_names,
                    "Answer a request naming a model this server does not serve with 404 "
                    "(default: the served model answers it)");
    serve
        ->add_option("--config", so.config_file,
                     "JSON config: {\"default_priority\", \"priority_rules\": "
                     "[{\"key\"|\"user_agent\", \"class\"}]}")
        ->check(CLI::ExistingFile);
    serve
        ->add_option(
            "--aging-ms", so.aging_ms,
            "A sequence unserved this long is planned one class more urgent (starvation bound: 2x)")
        ->capture_default_str()
        ->check(CLI::Range(int64_t{0}, int64_t{3600000}));
    serve
        ->add_option("--service-half-life-ms", so.service_half_life_ms,
                     "Within a class, attained service (tokens) halves this often; 0: never")
        ->capture_default_str()
        ->check(CLI::Range(int64_t{0}, int64_t{3600000}));
    serve
        ->add_option("--preempt-quantum", so.preempt_quantum,
                     "Least service (tokens) a sequence gets in its slot before a same-class "
                     "newcomer may park it")
        ->capture_default_str()
        ->check(CLI::Range(0, 1 << 30));
    serve
        ->add_option("--min-share", so.min_share,
                     "Share of each tick's prompt budget kept for the longest-waiting prompt")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    serve->add_option("--max-queue", so.max_queue, "Waiting requests per class before 429/overload")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000000));
    auto size_check = CLI::Validator(
        [](std::string &v) {
            int64_t b = 0;
            return sf::parse_size_mib(v, b) ? std::string() : "not a size: " + v;
        },
        "SIZE", "size");
    std::string cache_ram = "4096", cache_disk = "8192";
    serve
        ->add_option("--cache-ram", cache_ram,
                     "Prefix cache memory budget (MiB, or with a unit: 512M, 2G, 64K, 1000B; 0 "
                     "disables the cache)")
        ->capture_default_str()
        ->check(size_check);
    serve->add_option("--cache-dir", so.cache_dir,
                      "Prefix cache disk tier directory (default $XDG_CACHE_HOME/superfluid/"
                      "prefix-cache; \"off\" disables it)");
    serve
        ->add_option("--cache-disk", cache_disk, "Size bound of the disk tier (MiB or with a unit)")
        ->capture_default_str()
        ->check(size_check);

    serve->add_option("--cache-type-k", so.cache_type_k, "KV cache element type of K")
        ->capture_default_str()
        ->check(CLI::IsMember(sf::kv_cache_type_names()));
    serve
        ->add_option("--cache-type-v", so.cache_type_v,
                     "KV cache element type of V (quantized V needs flash attention)")
        ->capture_default_str()
        ->check(CLI::IsMember(sf::kv_cache_type_names()));
    serve->add_option("--flash-attn", so.flash_attn, "Flash attention: auto, on or off")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "on", "off"}));
    serve
        ->add_option("--repack", so.repack,
                     "Weight repacking for faster CPU kernels (llama.cpp's default). off: a "
                     "quantized model's sampled streams stay the same through a worker kill")
        ->capture_default_str()
        ->check(CLI::IsMember({"on", "off"}));
    sf::add_gpu_options(*serve, so);
    serve
        ->add_option("--spec-type", so.spec_type,
                     "Speculative decoding: none, ngram (drafts from n-gram lookup in each "
                     "request's own prompt and output), draft (a draft model, --model-draft) or "
                     "mtp (the model's own multi-token-prediction layers); streams stay "
                     "byte-identical")
        ->capture_default_str()
        ->check(CLI::IsMember({"none", "ngram", "draft", "mtp"}));
    serve->add_option("--model-draft", so.model_draft,
                      "Draft model for speculative decoding (a .gguf path or org/repo:QUANT) "
                      "with the model's tokenizer; implies --spec-type draft");
    serve->add_option("--mmproj", so.mmproj,
                      "Multimodal projector for the model (an mmproj .gguf path, as "
                      "llama-server's --mmproj): /api/show and /v1/models then say the model "
                      "reads images; requests' images are not passed to it yet (issue #42)");
    serve
        ->add_option("--spec-draft-max", so.spec_draft_max,
                     "Most draft tokens per sequence per tick")
        ->capture_default_str()
        ->check(CLI::Range(1, sf::k_spec_draft_limit));

    serve
        ->add_option("--standby", so.standby,
                     "Hot standby worker: a second worker process, loaded and idle, that takes "
                     "over when the worker dies (streams resume without a model load). auto: "
                     "when available memory covers twice the worker's private memory + 1 GiB")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "on", "off"}));

    std::string journal_mode = "on";
    serve
        ->add_option("--journal", journal_mode,
                     "Write-ahead token journal under the state dir (off: no persistence, for "
                     "benchmarks)")
        ->capture_default_str()
        ->check(CLI::IsMember({"on", "off"}));
    serve
        ->add_option("--journal-sync", so.journal_sync,
                     "Journal durability: off (no fsync), normal (survives any process crash), "
                     "full (also a power loss)")
        ->capture_default_str()
        ->check(CLI::IsMember({"off", "normal", "full"}));
    serve
        ->add_option(
            "--journal-max-age", so.journal_max_age_s,
            "Finished sessions are removed from the journal after this (e.g. 90m, 24h, 7d)")
        ->type_name("DURATION")
        ->default_str("7d")
        ->transform(CLI::AsNumberWithUnit(
            std::map<std::string, int64_t>{{"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}},
            CLI::AsNumberWithUnit::CASE_SENSITIVE));
    serve
        ->add_option("--journal-max-size", so.journal_max_bytes,
                     "Above this, the oldest finished sessions are removed (e.g. 64MiB, 1GiB)")
        ->type_name("SIZE")
        ->default_str("256MiB")
        ->transform(CLI::AsSizeValue(false));
    serve
        ->add_option("--cache-share", so.cache_share,
                     "With several API keys, whose requests share cached prompt prefixes: key "
                     "(each key its own; another key cannot time a hit on your prompt) or all "
                     "(more hits, and that side channel open)")
        ->check(CLI::IsMember({"key", "all"}))
        ->default_str("key");
    serve->add_flag("!--no-retry-resume", so.retry_resume,
                    "Start every request afresh: a request sent again after a restart does not "
                    "attach to the session it interrupted");
    // Test only: caps the journal file (SQLite max_page_count, 4 KiB pages) to simulate a full
    // disk.
    serve->add_option("--journal-max-pages", so.journal_max_pages)->group("");
    // Test only: the worker's answers come from a script (engine/scripted/output_script.h), so
    // real agents run whole tool loops on a random-weight model.
    serve->add_option("--scripted-output", so.scripted_output)
        ->group("")
        ->check(CLI::ExistingFile)
        ->transform([](std::string p) { return std::filesystem::absolute(p).string(); });

    sf::add_serve_cluster_flags(*serve, so);
    // join, token create, nodes (cli/cluster_commands.h); join's worker flags land in jo.
    sf::serve_options jo;
    sf::cluster_cli cc;
    sf::add_cluster_commands(app, cc, jo);

    std::string ps_host = "127.0.0.1";
    int ps_port         = 8453;
    auto *ps = app.add_subcommand("ps", "Show the running server's model, worker and sessions");
    ps->add_option("--host", ps_host, "Server address")->capture_default_str();
    ps->add_option("--port", ps_port, "Server port")->capture_default_str();

    // The model store (models/model_store.h): pull, list, rm.
    std::string pull_model, store_dir;
    std::vector<std::string> rm_models;
    auto *pull = app.add_subcommand("pull", "Download a model from the Hugging Face hub");
    pull->add_option("model", pull_model, "org/repo[:TAG][@rev], e.g. unsloth/Qwen3-8B-GGUF:Q4_K_M")
        ->required();
    auto *list = app.add_subcommand("list", "List the pulled models");
    list->alias("ls");  // as Ollama users type it
    std::string show_model;
    auto *show = app.add_subcommand(
        "show", "Show a model's architecture, parameters, context length and quantization");
    show->add_option("model", show_model,
                     "A .gguf file, a pulled model (names as `list` shows them), or 'default'")
        ->required();
    auto *rm = app.add_subcommand("rm", "Remove pulled models");
    rm->add_option("models", rm_models, "Models to remove (names as `list` shows them)")
        ->required();
    for (auto *c : {pull, list, rm, show})
        c->add_option("--state-dir", store_dir,
                      "State directory (default: $XDG_STATE_HOME/superfluid)");

    sf::launch::launch_options lo;
    auto *launch = app.add_subcommand(
        "launch", "Run a coding agent against Superfluid (starts the server when needed)");
    sf::add_launch_options(*launch, lo);

    sf::run_command_options ro;
    auto *run = app.add_subcommand(
        "run",
        "Chat with the model in the terminal, or answer one prompt (starts the server "
        "when needed)");
    sf::add_run_options(*run, ro);

    sf::stop_options sto;
    auto *stop = app.add_subcommand(
        "stop", "Stop the server of a state directory (one that run or launch left running)");
    sf::add_stop_options(*stop, sto);

    sf::worker_options wo;
    // Internal (started by `serve` and `join`): not listed in --help.
    auto *worker = app.add_subcommand("worker", "Run an inference worker (started by `serve`)");
    worker->group("");
    worker->add_option("--model", wo.engine.model_path, "Path to the .gguf model")->required();
    auto *wsock = worker->add_option("--socket", wo.socket_path, "Unix socket to listen on");
    worker->add_option("--listen", wo.listen, "TCP host:port served over mutual TLS (a guest)")
        ->excludes(wsock);
    worker->add_option("--tls-cert", wo.tls_cert, "Node certificate (PEM), with --listen");
    worker->add_option("--tls-key", wo.tls_key, "Node private key (PEM), with --listen");
    worker->add_option("--tls-ca", wo.tls_ca, "Cluster CA certificate (PEM), with --listen");
    worker->add_option("--ctx-size", wo.engine.ctx_size, "Most tokens per sequence (0: auto)");
    worker->add_flag("--kv-unified", wo.engine.kv_unified, "One KV pool for all sequences");
    int64_t worker_kv_mib = 0;
    worker->add_option("--parallel", wo.engine.parallel, "Concurrent sequences (0: auto)");
    worker->add_option("--max-seqs", wo.engine.max_seqs, "Most sequences when --parallel is 0");
    worker->add_option("--kv-memory", worker_kv_mib, "KV memory for auto sequences, MiB");
    worker->add_option("--batch-size", wo.engine.batch_size, "Tokens per tick");
    worker->add_option("--prefill-chunk", wo.prefill_chunk, "Prompt tokens per sequence per tick");
    worker->add_option("--tick-ms", wo.tick_ms, "Target tick duration with prefill, ms");
    worker->add_option("--threads", wo.engine.threads, "CPU threads (0 = all)");
    worker->add_option("--aging-ms", wo.aging_ms, "Aging step in milliseconds");
    worker->add_option("--service-half-life-ms", wo.service.half_life_ms,
                       "Half-life of attained service");
    worker->add_option("--preempt-quantum", wo.service.quantum,
                       "Least service in a slot (tokens) before same-class preemption");
    worker->add_option("--min-share", wo.service.min_share,
                       "Prompt budget share of the longest-waiting prompt");
    worker->add_option("--max-queue", wo.max_waiting, "Waiting sessions per class");
    worker->add_option("--cache-ram-bytes", wo.cache_ram, "Prefix cache budget in bytes");
    worker->add_option("--cache-dir", wo.cache_dir, "Prefix cache disk tier ('' : none)");
    worker->add_option("--cache-disk-bytes", wo.cache_disk, "Disk tier bound in bytes");
    worker->add_option("--scripted-output", wo.scripted_output)->group("");
    worker->add_option("--standby-fd", wo.standby_fd)->group("");
    worker->add_option("--cache-type-k", wo.engine.cache_type_k, "KV cache type of K");
    worker->add_option("--cache-type-v", wo.engine.cache_type_v, "KV cache type of V");
    worker->add_option("--flash-attn", wo.engine.flash_attn, "Flash attention: auto, on, off");
    std::string worker_repack = "on";
    worker->add_option("--repack", worker_repack, "Weight repacking: on, off")
        ->check(CLI::IsMember({"on", "off"}));
    std::string worker_gpu_layers = "auto", worker_tensor_split;
    worker->add_option("--gpu-layers", worker_gpu_layers, "Layers on the GPU: auto, all or N")
        ->check(sf::gpu_layers_validator());
    worker->add_option("--main-gpu", wo.engine.gpu.main_gpu, "GPU of an unsplit model");
    worker->add_option("--tensor-split", worker_tensor_split, "Proportions per GPU, e.g. 3,1")
        ->check(sf::tensor_split_validator());
    std::string worker_spec_type = "none";
    worker
        ->add_option("--spec-type", worker_spec_type,
                     "Speculative decoding: none, ngram, draft, mtp")
        ->check(CLI::IsMember({"none", "ngram", "draft", "mtp"}));
    worker->add_option("--model-draft", wo.engine.spec.draft_model, "Draft model (.gguf path)");
    worker->add_option("--mmproj", wo.engine.mmproj_path,
                       "Multimodal projector of the model (.gguf path)");
    worker
        ->add_option("--spec-draft-max", wo.engine.spec.draft_max,
                     "Most draft tokens per sequence per tick")
        ->check(CLI::Range(1, sf::k_spec_draft_limit));

    sf::bench::bench_options bo;
    auto *bench =
        app.add_subcommand("bench", "Benchmark a server (and llama-server) on a scenario");
    sf::add_bench_options(*bench, bo);

    CLI11_PARSE(app, argc, argv);
    if (*serve) {
        so.ctx_size_given   = serve->count("--ctx-size") > 0;
        so.default_priority = *sf::parse_class_name(default_priority);
        sf::parse_size_mib(cache_ram, so.cache_ram);
        sf::parse_size_mib(cache_disk, so.cache_disk);
        so.journal = journal_mode == "on";
        std::chrono::milliseconds keep_alive_ms{};
        sf::parse_keep_alive_flag(keep_alive, keep_alive_ms);  // checked by the option
        so.keep_alive_ms = keep_alive_ms.count();
        if (!so.model_draft.empty() && so.spec_type == "none") so.spec_type = "draft";
        if (so.spec_type == "draft" && so.model_draft.empty()) {
            fprintf(stderr, "--spec-type draft needs --model-draft FILE\n");
            return 2;
        }
        if (!so.local_worker && !so.cluster) {
            fprintf(stderr, "--no-local-worker needs --cluster (a head that routes to guests)\n");
            return 2;
        }
        return sf::run_serve(so);
    }
    if (*worker) {
        if (wo.socket_path.empty() == wo.listen.empty()) {
            fprintf(stderr, "worker: give --socket PATH or --listen HOST:PORT\n");
            return 2;
        }
        sf::parse_spec_type(worker_spec_type, wo.engine.spec.type);
        wo.engine.repack = worker_repack == "on";
        sf::parse_gpu_layers(worker_gpu_layers, wo.engine.gpu.layers);
        sf::parse_tensor_split(worker_tensor_split, wo.engine.gpu.tensor_split);
        if (!wo.engine.spec.draft_model.empty() && wo.engine.spec.type == sf::spec_type::NONE)
            wo.engine.spec.type = sf::spec_type::DRAFT;
        wo.engine.kv_memory = worker_kv_mib << 20;
        return sf::run_worker(wo);
    }
    if (*ps) return sf::run_ps(ps_host, ps_port);
    if (*bench) return sf::run_bench(bo, argc, argv);
    if (*pull) return sf::run_pull(pull_model, store_dir);
    if (*list) return sf::run_list(store_dir);
    if (*show) return sf::run_show(show_model, store_dir);
    if (*rm) return sf::run_rm(rm_models, store_dir);
    if (*launch) return sf::run_launch_command(lo);
    if (*run) return sf::run_run_command(ro);
    if (*stop) return sf::run_stop(sto);
    if (int rc = sf::run_cluster_command(cc, jo); rc >= 0) return rc;
    return 2;
}
