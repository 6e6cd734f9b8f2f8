// session_manager's relay (declared in session_manager.h): how a started session's events get
// from the worker, on the Events stream or its own Generate call, through the journal to its
// readers, and how it resumes after the worker is lost.
#include <grpcpp/grpcpp.h>

#include <thread>

#include "protocol/convert.h"
#include "session/session_manager.h"
#include "util/log.h"

namespace sf {

namespace pb = superfluid::worker::v1;

void session_manager::settle_source(const std::string &id, const pb::Accepted &acc,
                                    std::shared_ptr<grpc::ClientReader<pb::GenerateEvent>> &reader,
                                    std::shared_ptr<event_mailbox> &box) {
    if (box && acc.events_stream_id() != 0) {
        events_->bind(box, acc.events_stream_id());
        reader->Finish();  // the worker ended the call after `accepted`
        reader.reset();
    } else if (box) {
        events_->close(id, box);
        box.reset();
    }
}

void session_manager::take_token(token_gate &g, const std::shared_ptr<session> &s,
                                 priority_class cls, std::chrono::steady_clock::time_point t0,
                                 const pb::Token &t) {
    std::lock_guard lk(g.mu);
    if (t.index() < g.next_index) return;  // journaled before a crash
    // Latency as the head sees it: TTFT from the request reaching us, then gaps.
    const auto now = std::chrono::steady_clock::now();
    if (g.last_token_at == std::chrono::steady_clock::time_point{}) {
        latency_.observe_ttft(cls, std::chrono::duration<double>(now - t0).count());
    } else {
        latency_.observe_itl(cls, std::chrono::duration<double>(now - g.last_token_at).count());
    }
    g.last_token_at = now;
    ++g.next_index;
    journal_token(s, protocol::from_proto(t));
}

void session_manager::cancel_on_worker(const std::string &id) {
    struct call {
        grpc::ClientContext ctx;
        pb::CancelRequest req;
        pb::CancelReply reply;
    };
    auto c = std::make_shared<call>();
    c->req.set_session_id(id);
    c->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    stub_->async()->Cancel(&c->ctx, &c->req, &c->reply, [c](grpc::Status) {});
}

void session_manager::set_canceller(session &s, std::shared_ptr<grpc::ClientContext> ctx,
                                    std::shared_ptr<event_mailbox> box) {
    if (box) {
        s.set_canceller([this, id = s.id(), box] {
            box->interrupt();
            cancel_on_worker(id);
        });
    } else {
        s.set_canceller([ctx] { ctx->TryCancel(); });
    }
}

void session_manager::launch_pump(std::shared_ptr<session> s, priority_class cls,
                                  std::chrono::steady_clock::time_point t0,
                                  pb::GenerateRequest preq,
                                  std::shared_ptr<grpc::ClientContext> ctx,
                                  std::shared_ptr<grpc::ClientReader<pb::GenerateEvent>> reader,
                                  std::shared_ptr<event_mailbox> box) {
    if (box || ctx) set_canceller(*s, ctx, box);
    pumps_++;
    {
        std::lock_guard lk(live_mu_);
        live_[s->id()] = s;
    }
    std::thread([this, s, cls, t0, preq = std::move(preq), ctx, reader, box]() mutable {
        pump(std::move(s), cls, t0, std::move(preq), std::move(ctx), std::move(reader),
             std::move(box));
    }).detach();
}

void session_manager::journal_token(const std::shared_ptr<session> &s, session_event ev) {
    journal::op o;
    o.type    = journal::op::kind::TOKEN;
    o.session = s->id();
    o.ev      = ev;
    o.done    = [s, ev = std::move(ev)](bool ok, const std::string &e) mutable {
        if (ok) return s->add_token(std::move(ev));
        // Never deliver a token that is not journaled: the session ends here.
        session_event fe;
        fe.type          = session_event::kind::FINISHED;
        fe.reason        = finish_reason::ERROR;
        fe.error         = "the token journal cannot be written (" + e + "); generation stopped";
        fe.prompt_tokens = s->prompt_tokens();
        fe.completion_tokens = static_cast<int32_t>(s->token_count());
        s->finish(std::move(fe));
        s->cancel();
    };
    journal_->submit(std::move(o));
}

void session_manager::journal_finish(const std::shared_ptr<session> &s, session_event ev) {
    journal::op o;
    o.type    = journal::op::kind::FINISH;
    o.session = s->id();
    o.ev      = ev;
    o.done    = [s, ev = std::move(ev)](bool ok, const std::string &e) mutable {
        if (!ok && ev.reason != finish_reason::ERROR) {
            ev.reason = finish_reason::ERROR;
            ev.error  = "the token journal cannot be written (" + e + ")";
        }
        s->finish(std::move(ev));
    };
    journal_->submit(std::move(o));
    s->wait_finished();
}

// Relays one session's events from the worker into `s` through the journal. When the worker
// dies mid-stream, the session is resubmitted to the restarted worker with its journaled tokens
// as the resume point; events with an index already journaled are dropped, so readers see one
// unbroken stream. A session recovered from the journal (head restart) starts at the resubmit.
void session_manager::pump(std::shared_ptr<session> s, priority_class cls,
                           std::chrono::steady_clock::time_point t0, pb::GenerateRequest preq,
                           std::shared_ptr<grpc::ClientContext> ctx,
                           std::shared_ptr<grpc::ClientReader<pb::GenerateEvent>> reader,
                           std::shared_ptr<event_mailbox> box) {
    constexpr int k_max_resumes = 3;  // a session that keeps crashing its worker fails instead
    int resumes                 = 0;
    bool finished               = false;
    std::string failure;
    auto gate        = std::make_shared<token_gate>();
    gate->next_index = s->token_count();  // journaled (or queued to be) so far
    auto next_index  = [&gate] {
        std::lock_guard lk(gate->mu);
        return gate->next_index;
    };
    for (;;) {
        if (reader || box) {
            pb::GenerateEvent ev;
            if (box) {
                box->set_token_handler(
                    [this, gate, s, cls, t0](pb::Token &t) { take_token(*gate, s, cls, t0, t); });
            }
            auto next = [&] { return box ? box->next(ev) : reader->Read(&ev); };
            while (!finished && next()) {
                if (ev.has_token()) {
                    take_token(*gate, s, cls, t0, ev.token());
                } else if (ev.has_finished()) {
                    finished         = true;
                    session_event fe = protocol::from_proto(ev.finished());
                    // Cut short by a shutdown: left unfinished in the journal, to be resumed.
                    if (shutting_down_.load() && fe.reason == finish_reason::CANCELLED) {
                        s->finish(std::move(fe));
                    } else {
                        journal_finish(s, std::move(fe));
                    }
                }
            }
            // A Generate call ends with its status; the Events stream was lost or interrupted.
            grpc::Status st;
            if (box) {
                events_->close(s->id(), box);
                st = box->lost() ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                                "the worker's event stream ended")
                                 : grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
            } else {
                st = reader->Finish();
            }
            if (finished) break;
            if (s->cancel_requested() || shutting_down_.load() ||
                st.error_code() == grpc::StatusCode::CANCELLED) {
                failure.clear();
                break;
            }
            failure = "the inference worker stopped during generation (" + st.error_message() + ")";
            if (++resumes > k_max_resumes) {
                failure = "the inference worker failed " + std::to_string(k_max_resumes + 1) +
                          " times during this session; giving up on it";
                break;
            }
            SF_LOG_WARN(
                "head",
                "session %s: worker lost at token %zu; resuming on the restarted worker (%d/%d)",
                s->id().c_str(), next_index(), resumes, k_max_resumes);
        }
        // Wait for the restarted worker (restart backoff + model load), bounded.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (std::chrono::steady_clock::now() < deadline && !s->cancel_requested() &&
               !shutting_down_.load()) {
            auto h = health();
            if (h.reachable && h.reply.ready()) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        // The resume point is what the journal holds: wait for the tokens still being committed.
        s->wait_tokens(next_index());
        if (s->cancel_requested() || shutting_down_.load() || s->finished()) {
            failure.clear();
            break;
        }
        preq.clear_resume_tokens();
        for (token_id t : s->token_ids()) preq.add_resume_tokens(t);
        preq.set_events_stream(true);  // also for a request journaled before the Events stream
        ctx = std::make_shared<grpc::ClientContext>();
        box = events_->open(s->id());
        reader.reset(stub_->Generate(ctx.get(), preq).release());
        pb::GenerateEvent first;
        if (!reader->Read(&first) || !first.has_accepted()) {
            events_->close(s->id(), box);
            box.reset();
            set_canceller(*s, ctx, nullptr);
            // Loop on: Read fails again (counted as another loss) or the worker rejected it.
            if (first.has_rejected()) {
                failure = "the session could not be resumed: " + first.rejected().message();
                reader->Finish();
                break;
            }
            continue;
        }
        settle_source(s->id(), first.accepted(), reader, box);
        set_canceller(*s, ctx, box);
    }
    if (!finished) {
        session_event fe;
        fe.type              = session_event::kind::FINISHED;
        fe.reason            = failure.empty() ? finish_reason::CANCELLED : finish_reason::ERROR;
        fe.error             = failure;
        fe.prompt_tokens     = s->prompt_tokens();
        fe.completion_tokens = static_cast<int32_t>(next_index());
        if (!failure.empty())
            SF_LOG_WARN("head", "session %s: %s", s->id().c_str(), failure.c_str());
        // A shutdown leaves the session unfinished in the journal: the next start completes it.
        if (shutting_down_.load()) {
            s->finish(std::move(fe));
        } else {
            journal_finish(s, std::move(fe));
        }
    }
    s->set_canceller(nullptr);
    {
        std::lock_guard lk(live_mu_);
        live_.erase(s->id());
    }
    pumps_--;
}

}  // namespace sf
