// Cache scopes, the head's half (issue #38, the shared-cache side channel): a request reuses
// cached prefixes only from requests of its own scope. Without scopes any client could time its
// first token to learn whether another client's prompt is cached. A request's scope comes from
// its `cache_salt` (vLLM's field) and, when the server has several API keys and `--cache-share`
// is `key` (the default then), from its API key's id. The empty scope is shared by every
// unscoped request. The worker's half: cache::cache_scope_id (cache/prefix_cache.h).
// A plain function, any thread.
#pragma once

#include <string>
#include <string_view>

namespace sf {

/**
 * The scope of a request with cache salt `salt` whose key id (client_identity's "key:…", no
 * secret) is `key_id`, either possibly empty: "" when both are, else the first 16 hex digits of
 * SHA-256 over both (so the journal and the wire carry no salt).
 */
std::string make_cache_scope(std::string_view salt, std::string_view key_id);

}  // namespace sf
