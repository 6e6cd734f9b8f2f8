#include "models/model_store.h"

#include <ctime>
#include <filesystem>

#include "models/blob_downloader.h"
#include "models/hf_cache.h"
#include "models/quant_selector.h"

namespace sf::models {

model_store::model_store(store_options opts) : opts_(std::move(opts)) {}

pull_status model_store::resolve(const model_ref &ref, const pull_events &ev, repo_snapshot &snap,
                                 std::string &error) const {
    hub_client hub(opts_.hub);
    hf_cache cache(opts_.hub_dir);
    auto st = hub.snapshot(ref.repo, ref.rev(), snap, error);
    if (st == hub_status::OK) return pull_status::OK;
    if (st != hub_status::UNREACHABLE)
        return st == hub_status::REPO_NOT_FOUND || st == hub_status::REVISION_NOT_FOUND
                   ? pull_status::NOT_FOUND
                   : pull_status::FAILED;
    // Offline: what this revision resolved to last time, if its files are still here.
    auto commit = cache.read_ref(ref.repo, ref.rev());
    if (commit) {
        snap.commit = *commit;
        snap.files  = cache.snapshot_files(ref.repo, *commit);
    }
    if (!commit || snap.files.empty()) {
        error += " (and no copy of " + ref.repo + "@" + ref.rev() + " is in " + cache.root() + ")";
        return pull_status::UNREACHABLE;
    }
    if (ev.note) ev.note("hub unreachable (" + error + "); using the cached snapshot " + *commit);
    error.clear();
    return pull_status::OK;
}

pull_status model_store::pull(const model_ref &ref, const pull_events &ev, model_entry &out,
                              std::string &error) const {
    if (ev.status) ev.status("pulling manifest");
    repo_snapshot snap;
    if (auto st = resolve(ref, ev, snap, error); st != pull_status::OK) return st;
    gguf_group group;
    if (!select_quant(snap.files, ref.tag, ref.repo, group, error)) return pull_status::NOT_FOUND;

    hf_cache cache(opts_.hub_dir);
    hub_client hub(opts_.hub);
    blob_downloader downloader(hub.http());
    for (const auto &f : group.files) {
        if (cache.has_file(ref.repo, snap.commit, f)) {  // pulled before, or by another tool
            if (ev.progress) ev.progress(f, f.size);
            continue;
        }
        if (f.etag().empty()) {
            error = "the hub published no checksum for " + f.path;
            return pull_status::FAILED;
        }
        download_callbacks cb;
        cb.progress = [&](uint64_t done, uint64_t) {
            if (ev.progress) ev.progress(f, done);
        };
        cb.note       = ev.note;
        cb.keep_going = ev.keep_going;
        cb.verifying  = [&] {
            if (ev.status) ev.status("verifying sha256 digest");
        };
        auto r = downloader.fetch(hub.file_url(ref.repo, snap.commit, f.path), f,
                                  cache.blob_path(ref.repo, f.etag()),
                                  cache.lock_path(ref.repo, f.etag()), cb, error);
        if (r == download_result::INTERRUPTED) {
            error = "interrupted; the partial download is kept, pull again to resume";
            return pull_status::INTERRUPTED;
        }
        if (r != download_result::OK) return pull_status::FAILED;
        if (!cache.link_snapshot(ref.repo, snap.commit, f, error)) return pull_status::FAILED;
    }
    cache.write_ref(ref.repo, ref.rev(), snap.commit);

    if (ev.status) ev.status("writing manifest");
    out       = {};
    out.repo  = ref.repo;
    out.quant = group.quant.empty() ? ref.tag : group.quant;
    out.name  = ref.repo + (out.quant.empty() ? "" : ":" + out.quant) +
               (ref.revision.empty() ? "" : "@" + ref.revision);
    out.revision = ref.revision;
    out.commit   = snap.commit;
    for (const auto &f : group.files) out.files.push_back(f.path);
    out.path      = cache.snapshot_path(ref.repo, snap.commit, group.files.front().path);
    out.size      = group.total_size();
    out.pulled_at = int64_t(time(nullptr));
    if (!model_index(opts_.state_dir).upsert(out)) {
        error = "cannot write the model index under " + opts_.state_dir;
        return pull_status::FAILED;
    }
    if (ev.status) ev.status("success");
    return pull_status::OK;
}

std::optional<model_entry> model_store::find(const std::string &name) const {
    auto e = model_index(opts_.state_dir).find(name);
    if (!e) return std::nullopt;
    std::error_code ec;
    hf_cache cache(opts_.hub_dir);
    for (const auto &p : e->files)
        if (!std::filesystem::is_regular_file(cache.snapshot_path(e->repo, e->commit, p), ec))
            return std::nullopt;
    return e;
}

std::vector<model_entry> model_store::list() const {
    return model_index(opts_.state_dir).list();
}

bool model_store::remove(const std::string &name, uint64_t &freed, std::string &error) const {
    model_index index(opts_.state_dir);
    auto e = index.find(name);
    if (!e) {
        error = "model '" + name + "' not found";
        return false;
    }
    index.remove(e->name);
    // Files another pulled model of the same commit still uses stay.
    std::vector<std::string> drop;
    auto others = index.list();
    for (const auto &p : e->files) {
        bool shared = false;
        for (const auto &o : others)
            if (o.repo == e->repo && o.commit == e->commit)
                for (const auto &q : o.files) shared = shared || q == p;
        if (!shared) drop.push_back(p);
    }
    freed = hf_cache(opts_.hub_dir).remove_files(e->repo, e->commit, drop);
    return true;
}

}  // namespace sf::models
