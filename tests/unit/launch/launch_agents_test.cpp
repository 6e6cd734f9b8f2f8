// What each agent `superfluid launch` knows gets (launch/launch_agents.h): its environment,
// arguments and config files, read back the way the agent reads them (JSON, TOML overrides,
// YAML) and checked field by field: the server's URL, the model, the key and the priority.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "launch/launch_agents.h"
#include "temp_dir.h"

using nlohmann::json;
using namespace sf::launch;

namespace {

const char *kBase   = "http://127.0.0.1:9123";
const char *kHeader = "X-Superfluid-Priority";

launch_context context(const sf::test::temp_dir &dir, const std::string &priority = "interactive",
                       const std::string &model = "org/repo:Q4_K_M") {
    launch_context c;
    c.base_url       = kBase;
    c.model          = model;
    c.priority       = priority;
    c.home           = dir.path + "/home";
    c.config_home    = c.home + "/.config";
    c.launch_dir     = dir.path + "/state/launch/agent";
    c.context_length = 4096;
    return c;
}

launch_plan plan_of(const std::string &agent, const launch_context &c) {
    const agent_def *a = find_agent(agent);
    if (!a) throw std::runtime_error("no agent " + agent);
    return a->plan(c);
}

std::map<std::string, std::string> env_of(const launch_plan &p) {
    std::map<std::string, std::string> env;
    for (const auto &[k, v] : p.env) {
        EXPECT_TRUE(env.emplace(k, v).second) << "set twice: " << k;
    }
    return env;
}

const launch_file &file_at(const launch_plan &p, const std::string &path) {
    for (const auto &f : p.files)
        if (f.path == path) return f;
    throw std::runtime_error("no file " + path);
}

std::string key_for(const std::string &priority) {
    return "sk-" + priority + "-superfluid";
}

// --- TOML, as far as codex's -c overrides use it: a basic string or an inline table. ---

void skip_space(std::string_view s, size_t &i) {
    while (i < s.size() && s[i] == ' ') ++i;
}

std::string toml_string(std::string_view s, size_t &i) {
    if (i >= s.size() || s[i] != '"') throw std::runtime_error("not a string: " + std::string(s));
    size_t j = i + 1;
    while (j < s.size() && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
    if (j >= s.size()) throw std::runtime_error("unterminated string: " + std::string(s));
    // A TOML basic string's escapes (\" \\ \uXXXX …) are JSON's.
    std::string out = json::parse(s.substr(i, j + 1 - i)).get<std::string>();
    i               = j + 1;
    return out;
}

json toml_value(std::string_view s, size_t &i) {
    skip_space(s, i);
    if (i < s.size() && s[i] == '{') {
        json t = json::object();
        ++i;
        for (;;) {
            skip_space(s, i);
            if (i < s.size() && s[i] == '}') {
                ++i;
                return t;
            }
            std::string key = toml_string(s, i);
            skip_space(s, i);
            if (i >= s.size() || s[i] != '=') throw std::runtime_error("no '=' in table");
            ++i;
            t[key] = toml_value(s, i);
            skip_space(s, i);
            if (i < s.size() && s[i] == ',') ++i;
        }
    }
    for (const char *b : {"true", "false"}) {  // booleans (the offline switches)
        if (s.substr(i).starts_with(b)) {
            i += std::string_view(b).size();
            return json(b[0] == 't');
        }
    }
    return toml_string(s, i);
}

// `-c key.path=value` pairs into one document.
json codex_overrides(const std::vector<std::string> &args) {
    json cfg = json::object();
    EXPECT_EQ(args.size() % 2, 0u);
    for (size_t k = 0; k + 1 < args.size(); k += 2) {
        EXPECT_EQ(args[k], "-c");
        const std::string &o = args[k + 1];
        const size_t eq      = o.find('=');
        if (eq == std::string::npos) throw std::runtime_error("no '=' in " + o);
        json::json_pointer ptr;
        std::string key = o.substr(0, eq);
        for (size_t start = 0;;) {
            size_t dot = key.find('.', start);
            ptr /= key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            if (dot == std::string::npos) break;
            start = dot + 1;
        }
        size_t i = 0;
        std::string_view value(o);
        value.remove_prefix(eq + 1);
        cfg[ptr] = toml_value(value, i);
        EXPECT_EQ(i, value.size()) << o;
    }
    return cfg;
}

// --- YAML, as far as Hermes' config.yaml uses it: nested maps of double-quoted (JSON) or
// plain strings. ---

json simple_yaml(const std::string &text) {
    json doc                                                = json::object();
    std::vector<std::pair<size_t, json::json_pointer>> open = {{0, json::json_pointer()}};
    size_t start                                            = 0;
    while (start < text.size()) {
        size_t nl        = text.find('\n', start);
        std::string line = text.substr(start, nl == std::string::npos ? nl : nl - start);
        start            = nl == std::string::npos ? text.size() : nl + 1;
        const size_t ind = line.find_first_not_of(' ');
        if (ind == std::string::npos || line[ind] == '#') continue;
        const size_t colon = line.find(':', ind);
        if (colon == std::string::npos) throw std::runtime_error("not a mapping: " + line);
        while (open.size() > 1 && open.back().first >= ind + 1) open.pop_back();
        auto ptr         = open.back().second / line.substr(ind, colon - ind);
        std::string rest = line.substr(colon + 1);
        rest.erase(0, rest.find_first_not_of(' '));
        if (rest.empty()) {
            doc[ptr] = json::object();
            open.emplace_back(ind + 1, ptr);
        } else {
            doc[ptr] = rest[0] == '"' ? json::parse(rest).get<std::string>() : rest;
        }
    }
    return doc;
}

}  // namespace

TEST(LaunchAgents, KnowsEachAgentByNameAndAlias) {
    std::vector<std::string> names;
    for (const auto &a : launch_agents()) {
        names.push_back(a.name);
        EXPECT_TRUE(a.title && *a.title) << a.name;
        EXPECT_TRUE(a.install && *a.install) << a.name;
        EXPECT_EQ(find_agent(a.name), &a);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"claude", "codex", "opencode", "pi", "cline",
                                               "hermes", "openclaw", "ollama"}));
    EXPECT_EQ(find_agent("claude-code"), find_agent("claude"));
    EXPECT_EQ(find_agent("open-code"), find_agent("opencode"));
    EXPECT_EQ(find_agent("nope"), nullptr);
}

// Whatever the form, every agent is sent to the server: its URL is in what the plan sets, and
// its files stay in the user's home or the launch's own folder.
TEST(LaunchAgents, EveryAgentIsPointedAtTheServer) {
    sf::test::temp_dir dir;
    const auto c = context(dir);
    for (const auto &a : launch_agents()) {
        SCOPED_TRACE(a.name);
        const launch_plan p = a.plan(c);
        EXPECT_FALSE(p.program.empty());
        EXPECT_FALSE(p.priority_note.empty());
        std::string everything;
        for (const auto &[k, v] : p.env) everything += v + "\n";
        for (const auto &x : p.args) everything += x + "\n";
        for (const auto &f : p.files) {
            everything += f.content;
            const bool home_or_ours =
                f.path.starts_with(c.home + "/") || f.path.starts_with(c.launch_dir + "/");
            EXPECT_TRUE(home_or_ours) << f.path;
            EXPECT_EQ(f.restore, f.path.starts_with(c.home + "/")) << f.path;
        }
        EXPECT_NE(everything.find(kBase), std::string::npos);
        EXPECT_EQ(everything.find("http://127.0.0.1:8453"), std::string::npos);
    }
}

// Issue #36: without --priority an agent carries no class (no header, a key that names none),
// so it gets the server's default as any unmarked client does; the key tells agents apart.
TEST(LaunchAgents, WithoutAClassNoHeaderAndAKeyThatNamesNone) {
    sf::test::temp_dir dir;
    for (const char *agent : {"claude", "codex", "opencode", "pi", "cline", "hermes", "openclaw"}) {
        SCOPED_TRACE(agent);
        const auto p = plan_of(agent, context(dir, ""));
        std::string all;  // everything the agent is given
        for (const auto &a : p.args) all += "\n" + a;
        for (const auto &[k, v] : p.env) all += "\n" + k + "=" + v;
        for (const auto &f : p.files) all += "\n" + f.content;
        EXPECT_EQ(all.find(kHeader), std::string::npos) << "a class header";
        for (const char *cls : {"sk-interactive-", "sk-normal-", "sk-batch-"})
            EXPECT_EQ(all.find(cls), std::string::npos) << cls;
        if (std::string(agent) != "codex")  // Codex sends no key
            EXPECT_NE(all.find(std::string("sk-superfluid-") + agent), std::string::npos);
    }
}

TEST(LaunchAgents, ClaudeCodeGetsTheAnthropicEndpointModelKeyAndHeader) {
    sf::test::temp_dir dir;
    for (const std::string cls : {"interactive", "normal", "batch"}) {
        SCOPED_TRACE(cls);
        const auto p   = plan_of("claude", context(dir, cls));
        const auto env = env_of(p);
        EXPECT_EQ(p.program, "claude");
        EXPECT_TRUE(p.args.empty());
        EXPECT_TRUE(p.files.empty());
        EXPECT_EQ(env.at("ANTHROPIC_BASE_URL"), kBase);  // the Messages API is at the root
        EXPECT_EQ(env.at("ANTHROPIC_AUTH_TOKEN"), key_for(cls));
        for (const char *v : {"ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL",
                              "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL",
                              "ANTHROPIC_DEFAULT_HAIKU_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL"})
            EXPECT_EQ(env.at(v), "org/repo:Q4_K_M") << v;
        EXPECT_EQ(env.at("ANTHROPIC_CUSTOM_HEADERS"), std::string(kHeader) + ": " + cls);
        EXPECT_EQ(env.at("CLAUDE_CODE_ATTRIBUTION_HEADER"), "0");  // keeps prompts cacheable
        EXPECT_EQ(env.at("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"), "1");
        // A key in the user's environment would win over the token.
        EXPECT_EQ(p.unset, std::vector<std::string>{"ANTHROPIC_API_KEY"});
    }
}

TEST(LaunchAgents, CodexGetsAResponsesProviderAsTomlOverrides) {
    sf::test::temp_dir dir;
    // A model id that TOML must escape.
    const std::string model = "we\"ird\\model";
    const auto p            = plan_of("codex", context(dir, "batch", model));
    EXPECT_EQ(p.program, "codex");
    EXPECT_TRUE(p.env.empty());
    EXPECT_TRUE(p.files.empty());  // nothing written to ~/.codex
    const json cfg = codex_overrides(p.args);
    EXPECT_EQ(cfg["model_provider"], "superfluid");
    EXPECT_EQ(cfg["model"], model);
    const json &prov = cfg["model_providers"]["superfluid"];
    EXPECT_EQ(prov["base_url"], std::string(kBase) + "/v1");
    EXPECT_EQ(prov["wire_api"], "responses");
    EXPECT_EQ(prov["name"], "Superfluid");
    EXPECT_EQ(prov["http_headers"], json({{kHeader, "batch"}}));
    // Nothing fetched from the outside world (issue #19).
    EXPECT_EQ(cfg["features"]["plugins"], false);
    EXPECT_EQ(cfg["analytics"]["enabled"], false);
    EXPECT_EQ(cfg["check_for_update_on_startup"], false);
}

TEST(LaunchAgents, OpenCodeGetsAnOpenAiCompatibleProviderInItsConfigVariable) {
    sf::test::temp_dir dir;
    const auto c   = context(dir, "normal");
    const auto p   = plan_of("opencode", c);
    const auto env = env_of(p);
    EXPECT_EQ(p.program, "opencode");
    // Its one file: npm offline in its config dir, for the run (the user's own, restored after).
    ASSERT_EQ(p.files.size(), 1u);
    EXPECT_EQ(p.files[0].path, c.config_home + "/opencode/.npmrc");
    EXPECT_TRUE(p.files[0].restore);
    EXPECT_NE(p.files[0].content.find("offline=true"), std::string::npos);
    const json cfg   = json::parse(env.at("OPENCODE_CONFIG_CONTENT"));
    const json &prov = cfg["provider"]["superfluid"];
    EXPECT_EQ(prov["npm"], "@ai-sdk/openai-compatible");
    EXPECT_EQ(prov["options"]["baseURL"], std::string(kBase) + "/v1");
    EXPECT_EQ(prov["options"]["apiKey"], key_for("normal"));
    EXPECT_EQ(prov["options"]["headers"], json({{kHeader, "normal"}}));
    EXPECT_TRUE(prov["models"].contains("org/repo:Q4_K_M"));
    EXPECT_EQ(cfg["model"], "superfluid/org/repo:Q4_K_M");
    EXPECT_EQ(cfg["small_model"], "superfluid/org/repo:Q4_K_M");
}

TEST(LaunchAgents, PiGetsItsProviderMergedIntoTheUsersModelsFile) {
    sf::test::temp_dir dir;
    const auto c          = context(dir);
    const std::string own = c.home + "/.pi/agent/models.json";
    dir.write(own, R"({"providers": {"mine": {"baseUrl": "http://x"}}, "other": 1})");
    const auto p = plan_of("pi", c);
    EXPECT_EQ(p.program, "pi");
    EXPECT_EQ(p.args, (std::vector<std::string>{"--provider", "superfluid", "--model", c.model}));
    ASSERT_EQ(p.files.size(), 1u);
    const auto &f = file_at(p, own);
    EXPECT_TRUE(f.restore);  // the user's own file comes back after the run
    const json cfg = json::parse(f.content);
    EXPECT_EQ(cfg["providers"]["mine"]["baseUrl"], "http://x");  // kept
    EXPECT_EQ(cfg["other"], 1);
    const json &prov = cfg["providers"]["superfluid"];
    EXPECT_EQ(prov["baseUrl"], std::string(kBase) + "/v1");
    EXPECT_EQ(prov["api"], "openai-completions");
    EXPECT_EQ(prov["apiKey"], key_for("interactive"));
    EXPECT_EQ(prov["headers"], json({{kHeader, "interactive"}}));
    EXPECT_EQ(prov["models"], json::parse(R"([{"id": "org/repo:Q4_K_M"}])"));

    // A file that is not a JSON object is replaced, not merged into.
    dir.write(own, "not json");
    const json fresh = json::parse(plan_of("pi", c).files.at(0).content);
    EXPECT_EQ(fresh["providers"].size(), 1u);
    EXPECT_TRUE(fresh["providers"].contains("superfluid"));
}

TEST(LaunchAgents, ClineGetsTheOpenAiProviderForBothModesAndTheKeyInItsSecrets) {
    sf::test::temp_dir dir;
    const auto c            = context(dir, "batch");
    const std::string state = c.home + "/.cline/data/globalState.json";
    const std::string sec   = c.home + "/.cline/data/secrets.json";
    dir.write(state, R"({"telemetrySetting": "disabled"})");
    dir.write(sec, R"({"anthropicApiKey": "kept"})");
    const auto p = plan_of("cline", c);
    EXPECT_EQ(p.program, "cline");
    ASSERT_EQ(p.files.size(), 4u);  // + Cline 3's providers.json and global-settings.json
    EXPECT_TRUE(file_at(p, c.home + "/.cline/data/settings/providers.json").restore);
    EXPECT_TRUE(file_at(p, c.home + "/.cline/data/settings/global-settings.json").restore);
    const json gs = json::parse(file_at(p, state).content);
    EXPECT_TRUE(file_at(p, state).restore);
    EXPECT_EQ(gs["telemetrySetting"], "disabled");
    EXPECT_EQ(gs["actModeApiProvider"], "openai");
    EXPECT_EQ(gs["planModeApiProvider"], "openai");
    EXPECT_EQ(gs["openAiBaseUrl"], std::string(kBase) + "/v1");
    EXPECT_EQ(gs["actModeOpenAiModelId"], c.model);
    EXPECT_EQ(gs["planModeOpenAiModelId"], c.model);
    EXPECT_EQ(gs["openAiHeaders"], json({{kHeader, "batch"}}));
    const json secrets = json::parse(file_at(p, sec).content);
    EXPECT_TRUE(file_at(p, sec).restore);
    EXPECT_EQ(secrets["openAiApiKey"], key_for("batch"));
    EXPECT_EQ(secrets["anthropicApiKey"], "kept");
}

TEST(LaunchAgents, HermesGetsALaunchOwnedHomeWithACustomEndpoint) {
    sf::test::temp_dir dir;
    const std::string model = "a \"quoted\" model";
    const auto c            = context(dir, "normal", model);
    const auto p            = plan_of("hermes", c);
    const auto env          = env_of(p);
    EXPECT_EQ(p.program, "hermes");
    EXPECT_EQ(env.at("HERMES_HOME"), c.launch_dir);  // the user's ~/.hermes is not used
    const auto &f = file_at(p, c.launch_dir + "/config.yaml");
    EXPECT_FALSE(f.restore);
    const json cfg = simple_yaml(f.content);
    EXPECT_EQ(cfg["model"]["default"], model);
    EXPECT_EQ(cfg["model"]["provider"], "custom");
    EXPECT_EQ(cfg["model"]["base_url"], std::string(kBase) + "/v1");
    EXPECT_EQ(cfg["model"]["api_key"], key_for("normal"));  // no custom headers: the key only
}

TEST(LaunchAgents, OpenClawGetsTheNativeOllamaProviderInALaunchOwnedConfig) {
    sf::test::temp_dir dir;
    const auto c   = context(dir, "batch");
    const auto p   = plan_of("openclaw", c);
    const auto env = env_of(p);
    EXPECT_EQ(p.program, "openclaw");
    EXPECT_EQ(env.at("OPENCLAW_CONFIG_PATH"), c.launch_dir + "/openclaw.json");
    EXPECT_EQ(env.at("OPENCLAW_STATE_DIR"), c.launch_dir + "/state");
    const auto &f = file_at(p, env.at("OPENCLAW_CONFIG_PATH"));
    EXPECT_FALSE(f.restore);
    const json cfg   = json::parse(f.content);
    const json &prov = cfg["models"]["providers"]["ollama"];
    EXPECT_EQ(cfg["models"]["mode"], "merge");
    EXPECT_EQ(prov["baseUrl"], kBase);  // /api/chat at the root, no /v1
    EXPECT_EQ(prov["api"], "ollama");
    EXPECT_EQ(prov["apiKey"], key_for("batch"));
    ASSERT_EQ(prov["models"].size(), 1u);
    EXPECT_EQ(prov["models"][0]["id"], c.model);
    EXPECT_EQ(prov["models"][0]["contextWindow"], 4096);  // the server's context
    EXPECT_EQ(cfg["agents"]["defaults"]["model"]["primary"], "ollama/" + c.model);
}

TEST(LaunchAgents, OllamaCliGetsTheServerAsItsHost) {
    sf::test::temp_dir dir;
    const auto p   = plan_of("ollama", context(dir));
    const auto env = env_of(p);
    EXPECT_EQ(p.program, "ollama");
    EXPECT_EQ(env.size(), 1u);
    EXPECT_EQ(env.at("OLLAMA_HOST"), kBase);
    EXPECT_TRUE(p.args.empty());
    EXPECT_TRUE(p.files.empty());
}
