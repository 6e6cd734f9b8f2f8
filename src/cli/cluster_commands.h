// Cluster subcommands (issue #17): `superfluid join HEAD:PORT`, `superfluid token create`,
// `superfluid nodes [revoke NAME]`, and serve's cluster flags. Flags only; the work is in cluster/.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/serve_command.h"

namespace sf {

/** What the cluster subcommands parsed. */
struct cluster_cli {
    CLI::App *join = nullptr, *token = nullptr, *token_create = nullptr, *nodes = nullptr,
             *nodes_revoke = nullptr;
    std::string head, token_text, state_dir, model, name, listen_host = "0.0.0.0", advertise;
    std::string token_file;   // join --token-file (else --token, else SUPERFLUID_JOIN_TOKEN)
    std::string revoke_name;  // nodes revoke NAME
    int worker_port        = 8455;
    int uses               = 1;
    int64_t ttl_s          = 24 * 3600;
    std::string nodes_host = "127.0.0.1";
    int nodes_port         = 8453;
};

/** Adds --cluster, --guest-port, --guest-host and --no-local-worker to `serve`. */
void add_serve_cluster_flags(CLI::App &serve, serve_options &so);
/** Adds the join, token and nodes subcommands. */
void add_cluster_commands(CLI::App &app, cluster_cli &c, serve_options &worker_flags);
/** Runs the one of them that was given; -1 when none was. */
int run_cluster_command(cluster_cli &c, const serve_options &worker_flags);

}  // namespace sf
