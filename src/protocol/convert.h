// Conversions between the worker protocol's messages (proto/worker.proto) and the internal
// types the head and the worker use. One place for both directions, so the two sides agree.
#pragma once

#include "core/chat.h"
#include "core/generate_request.h"
#include "core/sampling.h"
#include "core/session_event.h"
#include "core/submit_result.h"
#include "core/worker_report.h"
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

/** A token or finish event of placement (`session_id`, `epoch`) as a GenerateEvent. */
void to_proto(const session_event &ev, const std::string &session_id, uint64_t epoch,
              pb::GenerateEvent &out);
session_event from_proto(const pb::Token &t);
session_event from_proto(const pb::Finished &f);

/** A placement both ways (worker_messages.cpp). from_proto sets has_seed; model and api are
 * the head's (journal record), not the worker's. */
void to_proto(const worker_submission &s, pb::GenerateRequest &out);
worker_submission from_proto(const pb::GenerateRequest &r);

/** Submit's and Render's answer both ways (worker_messages.cpp): an acceptance, or a refusal
 * whose kind travels as RejectCode (REJECT_UNSPECIFIED reads as INTERNAL). */
void to_proto(const accepted_session &a, pb::Accepted &out);
accepted_session from_proto(const pb::Accepted &a);
void to_proto(const start_error &e, pb::Rejected &out);
start_error from_proto(const pb::Rejected &r);

/** Health, model facts and embeddings (worker_messages.cpp). */
void to_proto(const worker_status &s, pb::HealthReply &out);
worker_status from_proto(const pb::HealthReply &r);
void to_proto(const model_description &m, pb::ModelInfoReply &out);
model_description from_proto(const pb::ModelInfoReply &r);
void to_proto(const embed_batch &j, pb::EmbedRequest &out);
embed_batch from_proto(const pb::EmbedRequest &r);

}  // namespace sf::protocol
