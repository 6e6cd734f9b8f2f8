// Which JSON Schema keywords the output grammar enforces (llama.cpp common/json-schema.cpp →
// json-schema-to-grammar.cpp). A response format must be enforced exactly, so a schema using a
// keyword the converter would ignore is refused with a 400 naming it, never run unconstrained.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace sf {

/**
 * The most bytes one schema (a response format, one tool's parameters), serialized, may take:
 * the worker builds a grammar from it for the request, and that cost grows with its size
 * (issue #38 item 4). Nesting is bounded already at parse time (api/common/json_fields.h,
 * 64 levels).
 */
constexpr size_t k_max_schema_bytes = size_t{64} << 10;

/**
 * Returns "" when `schema` only uses keywords the grammar enforces (or that are annotations),
 * else the first offending keyword, with its JSON pointer in `where` (e.g. "#/properties/a").
 * `strict` (response formats): value-level keywords the converter ignores (`format` other
 * than date/time/date-time/uuid, bounds on `number`, `multipleOf`, `uniqueItems`, …) count
 * too; without it (tool parameters, where agents send such annotations freely) only keywords
 * that change which documents match structurally (`not`, `if`/`then`/`else`, …) are refused.
 */
std::string unsupported_schema_keyword(const nlohmann::json &schema, bool strict,
                                       std::string &where);

}  // namespace sf
