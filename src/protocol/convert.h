// Conversions between the worker protocol's messages (proto/worker.proto) and the internal
// types the head and the worker use. One place for both directions, so the two sides agree.
#pragma once

#include "core/chat.h"
#include "core/sampling.h"
#include "core/session_event.h"
#include "worker.pb.h"

namespace sf::protocol {

namespace pb = superfluid::worker::v1;

pb::Priority to_proto(priority_class c);
priority_class from_proto(pb::Priority p);

void to_proto(const sampling_params &s, pb::SamplingParams &out);
sampling_params from_proto(const pb::SamplingParams &p);

void to_proto(const chat_message &m, pb::ChatMessage &out);
chat_message from_proto(const pb::ChatMessage &m);

/** Chat options (tools, tool choice, schema, reasoning) both ways. */
void to_proto(const chat_options &o, pb::ChatOptions &out);
chat_options from_proto(const pb::ChatOptions &o);

/** The parse spec of an accepted chat request both ways. */
void to_proto(const chat_parse_spec &p, pb::ChatParse &out);
chat_parse_spec from_proto(const pb::ChatParse &p);

/** A token or finish event of `session_id` as a GenerateEvent. */
void to_proto(const session_event &ev, const std::string &session_id, pb::GenerateEvent &out);
session_event from_proto(const pb::Token &t);
session_event from_proto(const pb::Finished &f);

}  // namespace sf::protocol
