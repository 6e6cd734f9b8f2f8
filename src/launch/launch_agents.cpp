#include "launch/launch_agents.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

namespace sf::launch {

using json = nlohmann::json;

namespace {

// The key an agent sends. With a class (launch --priority), the server reads it from the
// prefix (api/common/priority.h step 4); without one (the default), the key names no class, so the
// agent's requests get the server's --default-priority like any client that marks nothing,
// and the key tells the agents apart for least-attained-service fairness (issue #36: launched
// agents as "interactive" kept an unmarked chat waiting 10 s, the aging bound).
std::string api_key(const launch_context &c, const std::string &agent) {
    return c.priority.empty() ? "sk-superfluid-" + agent : "sk-" + c.priority + "-superfluid";
}

const char *kHeader = "X-Superfluid-Priority";

// The class header as a JSON object of headers: empty when the agent carries no class.
json class_headers(const launch_context &c) {
    return c.priority.empty() ? json::object() : json{{kHeader, c.priority}};
}

// An agent's own JSON config with our keys merged in (what was there stays).
json read_json(const std::string &path) {
    std::ifstream f(path);
    auto j = f ? json::parse(f, nullptr, false) : json::object();
    return j.is_object() ? j : json::object();
}

// A text file's content ("" when missing).
std::string read_text(const std::string &path) {
    std::ifstream f(path);
    return f ? std::string(std::istreambuf_iterator<char>(f), {}) : std::string();
}

// Claude Code reads its endpoint, credentials and model choices from the environment.
// CLAUDE_CODE_ATTRIBUTION_HEADER=0 keeps a per-request attribution block out of the system
// prompt (it would change every prompt and defeat prefix caching);
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 stops telemetry, error reporting and update
// checks, so nothing leaves the machine.
launch_plan claude(const launch_context &c) {
    launch_plan p;
    p.program = "claude";
    p.env     = {{"ANTHROPIC_BASE_URL", c.base_url},
                 {"ANTHROPIC_AUTH_TOKEN", api_key(c, "claude")},
                 {"ANTHROPIC_MODEL", c.model},
                 {"ANTHROPIC_SMALL_FAST_MODEL", c.model},
                 {"ANTHROPIC_DEFAULT_OPUS_MODEL", c.model},
                 {"ANTHROPIC_DEFAULT_SONNET_MODEL", c.model},
                 {"ANTHROPIC_DEFAULT_HAIKU_MODEL", c.model},
                 {"CLAUDE_CODE_SUBAGENT_MODEL", c.model},
                 {"CLAUDE_CODE_ATTRIBUTION_HEADER", "0"},
                 {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"}};
    if (!c.priority.empty())
        p.env.push_back({"ANTHROPIC_CUSTOM_HEADERS", std::string(kHeader) + ": " + c.priority});
    p.unset         = {"ANTHROPIC_API_KEY"};  // would take precedence over the token
    p.priority_note = "header via ANTHROPIC_CUSTOM_HEADERS, and the key in ANTHROPIC_AUTH_TOKEN";
    return p;
}

// Codex: a model provider given as -c overrides (nothing written to ~/.codex), speaking the
// Responses API (wire_api = "responses") at …/v1. Offline: no plugin sync (features.plugins:
// the curated marketplace is a git fetch from github.com and a ChatGPT catalog call), no
// analytics (ab.chatgpt.com), no update check (api.github.com).
launch_plan codex(const launch_context &c) {
    launch_plan p;
    p.program        = "codex";
    const auto quote = [](const std::string &s) { return json(s).dump(); };  // TOML basic string
    p.args           = {"-c", "model_provider=\"superfluid\"",
                        "-c", "model=" + quote(c.model),
                        "-c", "model_providers.superfluid.name=\"Superfluid\"",
                        "-c", "model_providers.superfluid.base_url=" + quote(c.base_url + "/v1"),
                        "-c", "model_providers.superfluid.wire_api=\"responses\"",
                        "-c", "features.plugins=false",
                        "-c", "analytics.enabled=false",
                        "-c", "check_for_update_on_startup=false"};
    if (!c.priority.empty())
        p.args.insert(p.args.begin() + 10,
                      {"-c", "model_providers.superfluid.http_headers={ \"" + std::string(kHeader) +
                                 "\" = " + quote(c.priority) + " }"});
    p.priority_note = "header via the provider's http_headers";
    return p;
}

// OpenCode: the whole config in OPENCODE_CONFIG_CONTENT (merged over the user's by opencode).
// Offline: no models.dev metadata fetch, update check, LSP downloads, default plugins (npm
// installs) or sharing (OPENCODE_DISABLE_*, autoupdate, share). OpenCode also installs
// @opencode-ai/plugin into its config directory in the background, with npm settings read
// from that directory: an `.npmrc` there with `offline=true` (for the run, restored after)
// keeps that install in npm's cache, without touching npm anywhere else.
launch_plan opencode(const launch_context &c) {
    json cfg = {
        {"$schema", "https://opencode.ai/config.json"},
        {"provider",
         {{"superfluid",
           {{"npm", "@ai-sdk/openai-compatible"},
            {"name", "Superfluid"},
            {"options",
             {{"baseURL", c.base_url + "/v1"},
              {"apiKey", api_key(c, "opencode")},
              {"headers", class_headers(c)}}},
            {"models", {{c.model, {{"name", c.model}}}}}}}}},
        {"model", "superfluid/" + c.model},
        {"small_model", "superfluid/" + c.model},
        {"autoupdate", false},
        {"share", "disabled"},
    };
    const std::string npmrc = c.config_home + "/opencode/.npmrc";
    std::string rc          = read_text(npmrc);
    if (!rc.empty() && rc.back() != '\n') rc += '\n';
    launch_plan p;
    p.program = "opencode";
    p.env     = {{"OPENCODE_CONFIG_CONTENT", cfg.dump()},   {"OPENCODE_DISABLE_MODELS_FETCH", "1"},
                 {"OPENCODE_DISABLE_AUTOUPDATE", "1"},      {"OPENCODE_DISABLE_LSP_DOWNLOAD", "1"},
                 {"OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"}, {"OPENCODE_DISABLE_SHARE", "1"}};
    p.files   = {{npmrc, rc + "offline=true\n", true}};
    p.priority_note = "header via the provider's options.headers, and the key";
    return p;
}

// pi (pi-coding-agent): custom providers live in ~/.pi/agent/models.json, which has no
// environment override; our provider is merged in for the run and the file restored after.
// Offline: PI_OFFLINE (no startup network operations, no version check), PI_TELEMETRY=0.
launch_plan pi(const launch_context &c) {
    std::string path               = c.home + "/.pi/agent/models.json";
    json cfg                       = read_json(path);
    cfg["providers"]["superfluid"] = {{"baseUrl", c.base_url + "/v1"},
                                      {"api", "openai-completions"},
                                      {"apiKey", api_key(c, "pi")},
                                      {"headers", class_headers(c)},
                                      {"models", {{{"id", c.model}}}}};
    launch_plan p;
    p.program       = "pi";
    p.args          = {"--provider", "superfluid", "--model", c.model};
    p.env           = {{"PI_OFFLINE", "1"}, {"PI_TELEMETRY", "0"}};
    p.files         = {{path, cfg.dump(2) + "\n", true}};
    p.priority_note = "header via the provider's headers, and the key";
    return p;
}

// Cline CLI: settings in ~/.cline/data/globalState.json, the key in secrets.json (no
// environment override); both are merged for the run and restored after. The OpenAI-compatible
// provider ("openai") for both act and plan modes. Cline 3 reads its provider from
// settings/providers.json instead ("openai-compatible"), merged the same way. Offline:
// settings/global-settings.json opts out of telemetry (otel.cline.bot) and auto-update;
// Cline 3.0.65 fetches PostHog feature flags (data.cline.bot) unless E2E_TEST=true, its only
// switch, so launch sets it (it also reaches commands Cline runs).
launch_plan cline(const launch_context &c) {
    std::string dir               = c.home + "/.cline/data";
    json state                    = read_json(dir + "/globalState.json");
    json secrets                  = read_json(dir + "/secrets.json");
    json providers                = read_json(dir + "/settings/providers.json");
    json global                   = read_json(dir + "/settings/global-settings.json");
    providers["version"]          = providers.value("version", 1);
    providers["lastUsedProvider"] = "openai-compatible";
    providers["providers"]["openai-compatible"]["settings"] = {{"provider", "openai-compatible"},
                                                               {"apiKey", api_key(c, "cline")},
                                                               {"model", c.model},
                                                               {"baseUrl", c.base_url + "/v1"},
                                                               {"headers", class_headers(c)}};
    global["telemetryOptOut"]                               = true;
    global["autoUpdateEnabled"]                             = false;
    state["actModeApiProvider"]                             = "openai";
    state["planModeApiProvider"]                            = "openai";
    state["openAiBaseUrl"]                                  = c.base_url + "/v1";
    state["actModeOpenAiModelId"]                           = c.model;
    state["planModeOpenAiModelId"]                          = c.model;
    state["openAiHeaders"]                                  = class_headers(c);
    state["welcomeViewCompleted"]                           = true;
    secrets["openAiApiKey"]                                 = api_key(c, "cline");
    launch_plan p;
    p.program       = "cline";
    p.env           = {{"E2E_TEST", "true"}};
    p.files         = {{dir + "/globalState.json", state.dump(2) + "\n", true},
                       {dir + "/secrets.json", secrets.dump(2) + "\n", true},
                       {dir + "/settings/providers.json", providers.dump(2) + "\n", true},
                       {dir + "/settings/global-settings.json", global.dump(2) + "\n", true}};
    p.priority_note = "header via openAiHeaders, and the key";
    return p;
}

// Hermes Agent: a launch-owned HERMES_HOME whose config.yaml names a custom OpenAI-compatible
// endpoint (the user's ~/.hermes, with its memories and skills, is not touched or used).
launch_plan hermes(const launch_context &c) {
    const auto q = [](const std::string &s) {
        return json(s).dump();
    };  // YAML accepts JSON strings
    launch_plan p;
    p.program       = "hermes";
    p.env           = {{"HERMES_HOME", c.launch_dir}};
    p.files         = {{c.launch_dir + "/config.yaml",
                        "# written by superfluid launch hermes\nmodel:\n  default: " + q(c.model) +
                            "\n  provider: custom\n  base_url: " + q(c.base_url + "/v1") +
                            "\n  api_key: " + q(api_key(c, "hermes")) + "\n",
                        false}};
    p.priority_note = "the key only (Hermes has no custom-header setting)";
    return p;
}

// OpenClaw: its native Ollama provider (api "ollama", /api/chat at the server root, no /v1),
// in a launch-owned config and state directory.
launch_plan openclaw(const launch_context &c) {
    json cfg = {
        {"models",
         {{"mode", "merge"},
          {"providers",
           {{"ollama",
             {{"baseUrl", c.base_url},
              {"api", "ollama"},
              {"apiKey", api_key(c, "openclaw")},
              {"models",
               {{{"id", c.model},
                 {"name", c.model},
                 {"reasoning", false},
                 {"input", {"text"}},
                 {"cost", {{"input", 0}, {"output", 0}, {"cacheRead", 0}, {"cacheWrite", 0}}},
                 {"contextWindow", c.context_length},
                 {"maxTokens", c.context_length}}}}}}}}}},
        {"agents", {{"defaults", {{"model", {{"primary", "ollama/" + c.model}}}}}}},
    };
    launch_plan p;
    p.program       = "openclaw";
    p.env           = {{"OPENCLAW_CONFIG_PATH", c.launch_dir + "/openclaw.json"},
                       {"OPENCLAW_STATE_DIR", c.launch_dir + "/state"}};
    p.files         = {{c.launch_dir + "/openclaw.json", cfg.dump(2) + "\n", false}};
    p.priority_note = "the key, when OpenClaw sends it to an Ollama provider";
    return p;
}

// The Ollama CLI (ollama run/list/ps/pull against our Ollama API).
launch_plan ollama(const launch_context &c) {
    launch_plan p;
    p.program = "ollama";
    p.env     = {{"OLLAMA_HOST", c.base_url}};
    p.priority_note =
        "none: the Ollama CLI sends no key or custom header, so its requests get the server's "
        "--default-priority (or a --config rule on the User-Agent \"ollama\")";
    return p;
}

}  // namespace

// What each agent's first request holds (system prompt, tool definitions, the user's message),
// measured with the agents pinned in tests/agents/package.json on the tiny model's tokenizer
// (Qwen3's), rounded to two digits: Claude Code 2.1.197 refuses it itself with "the request is
// ~18735 tokens" under a smaller context; the others are the prompt_tokens the server journaled
// for it (Codex 0.169.0 8,342; OpenCode 1.18.33 7,198, its title request 424; pi 0.73.1 1,390;
// OpenClaw 2026.9.6 12,560) or the size a smaller context refused (Cline 3.0.65 5,352). The
// minimum (what launch checks a running server's context against) holds that and the answers
// and tool results of a session's first turns: 32,768 for Claude Code and Codex (issue #36:
// both failed their first turn under the streams' default of 8,192) and OpenClaw (13K, and it
// compacts once its window is full); 16,384 for OpenCode and Cline (twice their first
// request); 8,192 for pi (six times its first).
// Hermes Agent is not installed here, so not measured: 32,768, as for the agents of its kind.
// The Ollama CLI is a chat: no minimum.
const std::vector<agent_def> &launch_agents() {
    static const std::vector<agent_def> all = {
        {"claude", "Claude Code", "npm install -g @anthropic-ai/claude-code", claude, 19000, 32768},
        {"codex", "Codex", "npm install -g @openai/codex", codex, 8300, 32768},
        {"opencode", "OpenCode", "npm install -g opencode-ai", opencode, 7200, 16384},
        {"pi", "pi", "npm install -g @mariozechner/pi-coding-agent", pi, 1400, 8192},
        {"cline", "Cline", "npm install -g cline", cline, 5400, 16384},
        {"hermes", "Hermes Agent", "see https://hermes-agent.nousresearch.com", hermes, 0, 32768},
        {"openclaw", "OpenClaw", "npm install -g openclaw", openclaw, 13000, 32768},
        {"ollama", "Ollama CLI", "see https://ollama.com/download", ollama, 0, 0},
    };
    return all;
}

const agent_def *find_agent(const std::string &name) {
    std::string n = name == "claude-code" ? "claude" : name == "open-code" ? "opencode" : name;
    for (const auto &a : launch_agents())
        if (n == a.name) return &a;
    return nullptr;
}

}  // namespace sf::launch
