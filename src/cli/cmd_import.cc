// noisefloor import | export
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <optional>
#include <streambuf>
#include <tuple>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "data/chat.h"
#include "data/draws_import.h"
#include "data/judge_import.h"
#include "runner/import.h"
#include "store/export_votes.h"
#include "store/store.h"
#include "util/exit_code.h"
#include "util/output_file.h"
#include "util/strings.h"

namespace nf::cli {

namespace {

JudgmentRow to_judgment(const VoteRecord& v) {
  JudgmentRow r;
  r.subject = v.subject;
  r.subject_provider = v.subject_provider;
  r.item = v.item;
  r.cluster = v.cluster;
  r.judge = v.judge;
  r.judge_provider = v.judge_provider;
  r.label = v.label;
  // An imported missing vote is not a vote. The schema lets only labelled rows be ok, so it
  // is stored as api_error with settings {imported: true}; metrics/judge_panel.h
  // is_imported_missing_vote() reports it as a missing vote, never as an API error.
  r.status = v.label ? "ok" : "api_error";
  r.settings = {{"imported", true}};
  return r;
}

Status ensure_study(Store& store, const std::string& name) {
  if (store.get_study().ok()) return Status::Ok();
  return store.put_study(StudyRecord{name, "", 0, {{"name", name}, {"imported", true}}}).status();
}

Status import_votes(Store& store, const std::vector<VoteRecord>& votes) {
  std::vector<JudgmentRow> rows;
  rows.reserve(votes.size());
  for (const auto& v : votes) rows.push_back(to_judgment(v));
  return store.put_judgments(rows);
}

/// Leaves out of `votes` and `labels` what the store already holds under the same key
/// (imported vote: subject, item, judge without a draw; label: rater, subject, item), as
/// `import probe-sheet` does for draws, so importing twice adds nothing. A stored entry
/// whose value differs is an error naming its key (two releases disagree: not a re-run).
/// Returns {votes skipped, labels skipped}.
Result<std::pair<size_t, size_t>> drop_stored(Store& store, std::vector<VoteRecord>& votes,
                                              std::vector<LabelRecord>& labels) {
  NF_ASSIGN_OR_RETURN(const auto judged, store.judgments());
  std::map<std::tuple<std::string, std::string, std::string>, std::optional<int>> stored_votes;
  for (const auto& j : judged)
    if (!j.draw_id) stored_votes[{j.subject, j.item, j.judge}] = j.label;
  NF_ASSIGN_OR_RETURN(const auto rated, store.human_labels());
  std::map<std::tuple<std::string, std::string, std::string>, int> stored_labels;
  for (const auto& l : rated) stored_labels[{l.rater, l.subject, l.item}] = l.label;
  std::pair<size_t, size_t> skipped{0, 0};
  std::vector<VoteRecord> new_votes;
  for (auto& v : votes) {
    auto it = stored_votes.find({v.subject, v.item, v.judge});
    if (it == stored_votes.end()) {
      new_votes.push_back(std::move(v));
      continue;
    }
    if (it->second != v.label)
      return InvalidArgument(fmt::format(
          "vote (subject {}, item {}, judge {}) is already stored with a different value; not a re-run of the same "
          "import (use another --store)",
          v.subject, v.item, v.judge));
    ++skipped.first;
  }
  votes = std::move(new_votes);
  std::vector<LabelRecord> new_labels;
  for (auto& l : labels) {
    auto it = stored_labels.find({l.rater, l.subject, l.item});
    if (it == stored_labels.end()) {
      new_labels.push_back(std::move(l));
      continue;
    }
    if (it->second != l.label)
      return InvalidArgument(fmt::format(
          "human label (rater {}, subject {}, item {}) is already stored with a different value; not a re-run of the "
          "same import (use another --store)",
          l.rater, l.subject, l.item));
    ++skipped.second;
  }
  labels = std::move(new_labels);
  return skipped;
}

std::string skipped_note(size_t votes, size_t labels) {
  if (votes == 0 && labels == 0) return "";
  return fmt::format(" ({} votes and {} human labels already in the store, left unchanged)", votes, labels);
}

Status import_labels(Store& store, const std::vector<LabelRecord>& labels) {
  std::vector<HumanLabelRow> rows;
  rows.reserve(labels.size());
  for (const auto& l : labels) rows.push_back({l.rater, l.subject, l.item, l.label});
  return store.put_human_labels(rows);
}

// ---- a store `import draws` creates: removed again if the import fails or is interrupted

// What the signal handler removes: plain C strings prepared before it is installed (the
// handler may only call async-signal-safe functions: unlink, rmdir, write, _exit).
std::vector<std::string> g_new_files;  // the store and its -wal, -shm, -journal
std::vector<std::string> g_new_dirs;   // folders the command created, deepest first
std::string g_interrupted_note;

void remove_new_store() {
  for (const auto& f : g_new_files) unlink(f.c_str());
  for (const auto& d : g_new_dirs) rmdir(d.c_str());  // fails (and keeps it) unless empty
}

void on_import_signal(int sig) {
  remove_new_store();
  ssize_t ignored = write(2, g_interrupted_note.data(), g_interrupted_note.size());
  (void)ignored;
  _exit(128 + sig);
}

/// A store that `import draws` is about to create at `path` (a SQLite file that does not
/// exist yet): remembers the folders above it that do not exist either, and until
/// keep() removes the file, its -wal/-shm/-journal and those folders (if empty) on
/// SIGINT, SIGTERM or SIGHUP (then exits 128 + signal) and when destroyed (a failed
/// import). A store that already exists is never touched: its transaction is simply not
/// committed. SIGKILL cannot be caught: it leaves the new store file, holding no draws.
class NewStoreGuard {
 public:
  explicit NewStoreGuard(const std::string& path) {
    std::error_code ec;
    if (Store::is_postgresql_url(path) || std::filesystem::exists(path, ec)) return;
    active_ = true;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) g_new_files.push_back(path + suffix);
    for (auto dir = std::filesystem::path(path).parent_path(); !dir.empty() && !std::filesystem::exists(dir, ec);
         dir = dir.parent_path())
      g_new_dirs.push_back(dir.string());
    g_interrupted_note =
        fmt::format("\nnoisefloor import: interrupted; removed the store it was creating ({})\n", path);
    struct sigaction sa {};
    sa.sa_handler = on_import_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, sig);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  }
  ~NewStoreGuard() {
    if (!active_) return;
    restore_signals();
    remove_new_store();
  }
  NewStoreGuard(const NewStoreGuard&) = delete;
  NewStoreGuard& operator=(const NewStoreGuard&) = delete;

  /// The import committed: keep the store.
  void keep() {
    if (!active_) return;
    restore_signals();
    active_ = false;
  }

 private:
  static void restore_signals() {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
  }
  bool active_ = false;
};

std::string absolute_path(const std::string& p) {
  std::error_code ec;
  const auto abs = std::filesystem::absolute(p, ec);
  return ec ? p : abs.lexically_normal().string();
}

/// `import probe-sheet`: the 50 released probe items of seed 004 (§2.3, §2.6) as chat
/// items, and each released response as an ok draw of its subject (condition
/// truncate_last_turn, config "released", replicate 0), ready for `noisefloor judge`.
/// Draws already in the store (same key) are left unchanged and counted as skipped.
int import_probe_sheet(const std::string& sheet, std::string key, const std::string& store_path,
                       const std::string& study_name, const ProviderMap& providers) {
  if (key.empty()) key = probe_sheet_key_path(sheet);
  auto items = read_probe_sheet(sheet, key);
  if (!items.ok()) return fail("import", items.status());
  if (items->empty())
    return fail("import", InvalidArgument(fmt::format("{}: no probe items: expected sections '## A001' ... with "
                                                      "'### Conversation' and '### Assistant response' (the "
                                                      "annotation_sheet.md of seed 004)",
                                                      sheet)));
  std::map<std::string, std::string> subject_provider;  // subject -> provider family
  for (const auto& it : *items) {
    const std::string subject = key.empty() ? "blinded" : it.meta.value("subject_model", "");
    if (subject.empty())
      return fail("import", InvalidArgument(fmt::format("{}: {}: subject_model: missing or empty", key, it.id)));
    if (subject_provider.count(subject)) continue;
    if (key.empty()) {
      subject_provider[subject] = "unknown";
      continue;
    }
    auto p = providers.provider_of(subject);
    if (!p.ok())
      return fail("import", p.status().with_context(fmt::format("{}: {}: subject_model", key, it.id)));
    subject_provider[subject] = *p;
  }
  auto store = Store::open(store_path);
  if (!store.ok()) return fail("import", store.status());
  Store& st = **store;
  if (auto existing = st.get_study(); existing.ok()) {
    const std::string task = existing->spec.value("task", std::string());
    if (!task.empty() && task != "chat")
      return fail("import", FailedPrecondition(fmt::format(
                                "store {}: holds the '{}' study '{}'; probe answers are chat draws and would be "
                                "mixed into it (import them into a store of their own)",
                                store_path, task, existing->name)));
  } else {
    std::string name = study_name;
    if (name == "imported") {  // the default: named after the sheet
      const size_t slash = sheet.rfind('/');
      name = slash == std::string::npos ? sheet : sheet.substr(slash + 1);
      if (const size_t dot = name.rfind('.'); dot != std::string::npos && dot > 0) name = name.substr(0, dot);
    }
    nlohmann::json spec = {{"name", name},
                           {"task", "chat"},
                           {"source", "annotation_sheet"},
                           {"imported", true},
                           {"dataset", {{"format", "probe_sheet"}, {"path", absolute_path(sheet)},
                                        {"key", key.empty() ? std::string() : absolute_path(key)}}},
                           {"conditions", {"truncate_last_turn"}}};
    auto put = st.put_study(StudyRecord{name, "", 0, spec});
    if (!put.ok()) return fail("import", put.status());
  }
  Status s = st.put_config("released", {{"source", "annotation_sheet"},
                                        {"note", "the released completions; their generation settings are not in the sheet"}});
  for (const auto& [subject, provider] : subject_provider) {
    if (!s.ok()) break;
    s = st.put_subject(subject, {{"name", subject}, {"provider", provider}, {"source", "annotation_sheet"}});
  }
  auto done = st.finished_keys();
  if (!done.ok()) return fail("import", done.status());
  std::vector<Draw> draws;
  size_t skipped = 0;
  for (const auto& it : *items) {
    if (!s.ok()) break;
    nlohmann::json messages = nlohmann::json::array();
    for (const auto& m : it.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    s = st.put_item(it.id, it.cluster, {{"messages", messages}, {"meta", it.meta}, {"released_response", it.response}});
    Draw d;
    d.key = {key.empty() ? "blinded" : it.meta.value("subject_model", ""), it.id, "truncate_last_turn", "released", 0};
    if (done->count(d.key.to_string())) {
      ++skipped;
      continue;
    }
    d.status = DrawStatus::kOk;
    d.cluster = it.cluster;
    d.request = {{"messages", messages}};
    d.content = it.response;
    d.extra = {{"source", "annotation_sheet"}, {"condition", {{"condition", "truncate_last_turn"}}}};
    if (it.response.empty()) d.extra["empty_response"] = true;  // A047: an empty answer, judged as such
    draws.push_back(std::move(d));
  }
  if (s.ok() && !draws.empty()) s = st.put_draws(draws);
  if (!s.ok()) return fail("import", s);
  std::fprintf(stderr,
               "import: %zu probe items, %zu released responses as draws of %zu subject(s) into %s%s\n"
               "next: noisefloor judge STUDY.yaml (docs/judging.md) scores them with a judge panel\n",
               items->size(), draws.size(), subject_provider.size(), store_path.c_str(),
               skipped ? fmt::format(" ({} already in the store, left unchanged)", skipped).c_str() : "");
  return 0;
}

}  // namespace

int cmd_import(int argc, char** argv) {
  CLI::App app{"Import published data into a store so the same analyses run on it.\n\n"
               "  noisefloor import draws FILE --store S.sqlite [--binary OUTCOME,...]\n"
               "published per-draw data in the long format, one row per outcome of one draw; FILE is\n"
               "CSV (header row, columns in any order) or JSONL (one object per line).\n"
               "  required columns: subject,item,condition,config,replicate,outcome,value\n"
               "    (condition and config may be empty: none, default; replicate 0, 1, ...)\n"
               "  optional columns: cluster (empty or absent = the item), label, status (empty = ok)\n"
               "value is a finite number, true/false (1/0), or a category label (B) for a categorical\n"
               "outcome; one outcome's values are all numbers or all labels. A draw whose status is\n"
               "parse_error, refused or api_error is ONE row with empty outcome and value (it has no\n"
               "outcomes; api_error draws are never scored). The JSONL draw lines of `export` (one draw\n"
               "with an outcomes array) are read too. Refused (exit 2, nothing\n"
               "written; a store the command created is removed, as on Ctrl-C): nan/inf, a non-zero\n"
               "value that underflows to 0 (1e-400), an outcome mixing numbers and labels (1O among\n"
               "0/1), two labels that differ only by surrounding spaces ('B', 'B '), two values of a\n"
               "key column (subject, item, cluster, condition, config) that do ('q1', 'q1 '), a\n"
               "repeated key in a JSONL object, a file without rows, a non-ok row with an outcome or\n"
               "value, an ok row without an outcome, rows of one draw with two statuses. Labels and key values differing\n"
               "only by case get a warning.\n"
               "--binary OUTCOME refuses any value of OUTCOME but 0/1/true/false; without it an\n"
               "outcome that is 0/1 except a few values gets a warning naming them (docs/store.md).\n"
               "Example: draws.csv holding the three lines\n"
               "  subject,item,condition,config,replicate,outcome,value\n"
               "  model-a,q1,none,default,0,correct,1\n"
               "  model-a,q1,none,default,1,correct,0\n"
               "  noisefloor import draws draws.csv --store S.sqlite --binary correct\n"
               "then: noisefloor analyze --store S.sqlite --out DIR\n\n"
               "  noisefloor import votes FILE --store S.sqlite\n"
               "judge votes, columns subject,subject_provider,item,cluster,judge,judge_provider,label\n"
               "(label 1/0, empty = missing vote).\n"
               "  noisefloor import labels FILE --store S.sqlite\n"
               "human ratings, columns rater,subject,item,label. For votes and labels too, key values\n"
               "that differ only by surrounding spaces are refused, by case warned about.\n"
               "  noisefloor import missing-info DIR --store S.sqlite\n"
               "the released files of seed 004 (votes.jsonl, key.json, labels_<RATER>.csv,\n"
               "perturbation_audit.csv). Subject providers come from the model name (gpt- openai,\n"
               "opus-/claude- anthropic, grok- xai, gemini- google); override with --provider M=P.\n"
               "  noisefloor import probe-sheet SHEET.md [--key KEY.json] --store S.sqlite\n"
               "the blinded annotation sheet of seed 004 (e.g. $NOISEFLOOR_DATA/missing-info-judges/\n"
               "annotation_sheet.md): each section becomes a chat item and its released response an ok\n"
               "draw (subject from key.json, default: key.json beside the sheet; without a key the\n"
               "subject is 'blinded'), condition truncate_last_turn, config 'released'. Re-importing\n"
               "skips draws already stored. Then score them: noisefloor judge STUDY.yaml.\n\n"
               "  noisefloor import inspect LOG.eval|LOG.json... --store S.sqlite [--cluster-field F]\n"
               "Inspect AI logs (docs/import-inspect.md): subject = model, item = sample id,\n"
               "replicate = epoch - 1, condition = task, config = generate config, one outcome per\n"
               "scorer (C/I/P/N -> 1/0/0.5/0); errored samples are api_error draws, never scored.\n"
               "  noisefloor import lm-eval SAMPLES.jsonl... --store S.sqlite [--subject M] [--task T]\n"
               "lm-evaluation-harness --log_samples files, one per run; runs of one task become\n"
               "replicates (docs/import-lm-eval.md).",
               "noisefloor import"};
  std::string format, file, store_path, study_name = "imported", key_path, cluster_field, subject, task;
  std::vector<std::string> files;
  std::vector<std::string> provider_overrides, binary;
  app.add_option("format", format,
                 "what FILE holds: draws | votes | labels | missing-info | probe-sheet | inspect | lm-eval")
      ->required()
      ->check(CLI::IsMember({"draws", "votes", "labels", "missing-info", "probe-sheet", "inspect", "lm-eval"}));
  app.add_option("file", files,
                 "the file (.csv or .jsonl) or, for missing-info, the directory; inspect and lm-eval take several")
      ->required();
  app.add_option("--cluster-field", cluster_field,
                 "inspect: sample metadata field, lm-eval: doc field naming the item's cluster (default: the item)");
  app.add_option("--subject", subject, "lm-eval: the model (default: the file's folder name, \"__\" read as \"/\")");
  app.add_option("--task", task, "lm-eval: the task (default: from samples_<task>_<timestamp>.jsonl)");
  app.add_option("--store", store_path, "the store to write: a SQLite file (created if missing) or a postgresql://... URL (docs/store.md)")->required();
  app.add_option("--study-name", study_name, "study name recorded in a new store (default: imported)");
  app.add_option("--provider", provider_overrides,
                 "missing-info, probe-sheet: MODEL=PROVIDER provider of a subject model");
  app.add_option("--binary", binary,
                 "draws: outcomes whose values must be 0, 1, true or false (any other value: exit 2); "
                 "repeat or separate with commas")
      ->delimiter(',');
  app.add_option("--key", key_path, "probe-sheet: the key.json naming each item's subject (default: beside the sheet)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  if (!binary.empty() && format != "draws")
    return fail("import", InvalidArgument("--binary: only for `import draws`"));
  if (format == "inspect" || format == "lm-eval")
    return import_harness({format, files, store_path, study_name, cluster_field, subject, task});
  if (files.size() != 1)
    return fail("import", InvalidArgument(fmt::format("import {}: expected one file, got {}", format, files.size())));
  file = files[0];
  if (format == "draws") {
    for (const auto& name : binary)
      if (trim(name).empty())
        return fail("import", InvalidArgument("--binary: an empty outcome name (expected --binary OUTCOME or "
                                              "--binary OUTCOME,OUTCOME...)"));
    // Streams the file into the store (bounded memory, issue 14). A store this command
    // created is removed again, with the folders it created, if the import fails or is
    // interrupted (NewStoreGuard), as when the file was read first.
    NewStoreGuard guard(store_path);
    auto store = Store::open(store_path);
    if (!store.ok()) return fail("import", store.status());
    auto sum = import_long_draws_file(file, **store, study_name, LongDrawChecks{binary});
    store->reset();  // closes the connection (the guard removes a new store's files after it)
    if (!sum.ok()) return fail("import", sum.status());
    guard.keep();
    for (const auto& w : sum->warnings) std::fprintf(stderr, "import: warning: %s\n", w.c_str());
    std::fprintf(stderr, "import: %lld rows -> %lld draws of %lld items (%s) into %s\n",
                 static_cast<long long>(sum->rows), static_cast<long long>(sum->draws),
                 static_cast<long long>(sum->items), status_counts_text(sum->by_status).c_str(), store_path.c_str());
    return 0;
  }
  ProviderMap providers;
  for (const auto& o : provider_overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.size())
      return fail("import", InvalidArgument("--provider: expected MODEL=PROVIDER, got '" + o + "'"));
    providers.overrides[o.substr(0, eq)] = o.substr(eq + 1);
  }
  if (format == "probe-sheet") return import_probe_sheet(file, key_path, store_path, study_name, providers);
  if (format == "votes") {
    std::vector<std::string> warnings;
    auto votes = read_votes(file, &warnings);
    if (!votes.ok()) return fail("import", votes.status());
    for (const auto& w : warnings) std::fprintf(stderr, "import: warning: %s\n", w.c_str());
    auto store = Store::open(store_path);
    if (!store.ok()) return fail("import", store.status());
    Status st = ensure_study(**store, study_name);
    if (st.ok()) st = import_votes(**store, *votes);
    if (!st.ok()) return fail("import", st);
    std::fprintf(stderr, "import: %zu votes into %s\n", votes->size(), store_path.c_str());
    return 0;
  }
  if (format == "labels") {
    std::vector<std::string> warnings;
    auto labels = read_labels(file, &warnings);
    if (!labels.ok()) return fail("import", labels.status());
    for (const auto& w : warnings) std::fprintf(stderr, "import: warning: %s\n", w.c_str());
    auto store = Store::open(store_path);
    if (!store.ok()) return fail("import", store.status());
    Status st = ensure_study(**store, study_name);
    if (st.ok()) st = import_labels(**store, *labels);
    if (!st.ok()) return fail("import", st);
    std::fprintf(stderr, "import: %zu human labels into %s\n", labels->size(), store_path.c_str());
    return 0;
  }
  auto data = read_missing_info_dir(file, providers);
  if (!data.ok()) return fail("import", data.status());
  auto store = Store::open(store_path);
  if (!store.ok()) return fail("import", store.status());
  Status st = ensure_study(**store, study_name);
  for (const auto& [item, cm] : data->items) {
    if (!st.ok()) break;
    st = (*store)->put_item(item, cm.first, cm.second);
  }
  const size_t n_votes = data->votes.size(), n_labels = data->labels.size();
  std::pair<size_t, size_t> skipped{0, 0};
  if (st.ok()) {
    auto sk = drop_stored(**store, data->votes, data->labels);
    if (sk.ok()) skipped = *sk;
    else st = sk.status();
  }
  if (st.ok()) st = import_votes(**store, data->votes);
  if (st.ok()) st = import_labels(**store, data->labels);
  if (!st.ok()) return fail("import", st);
  std::fprintf(stderr, "import: %zu votes, %zu human labels (raters %zu), %zu items into %s%s\n", n_votes, n_labels,
               data->raters.size(), data->items.size(), store_path.c_str(),
               skipped_note(skipped.first, skipped.second).c_str());
  return 0;
}

namespace {

// Forwards to another stream buffer and counts the newlines written, so `export` can tell a
// header-only CSV (no data rows) from one with rows, whether it writes a file or stdout.
class LineCountingBuf : public std::streambuf {
 public:
  explicit LineCountingBuf(std::streambuf* to) : to_(to) {}
  size_t lines() const { return lines_; }

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    if (traits_type::to_char_type(ch) == '\n') ++lines_;
    return to_->sputc(traits_type::to_char_type(ch));
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    lines_ += static_cast<size_t>(std::count(s, s + n, '\n'));
    return to_->sputn(s, n);
  }
  int sync() override { return to_->pubsync(); }

 private:
  std::streambuf* to_;
  size_t lines_ = 0;
};

}  // namespace

int cmd_export(int argc, char** argv) {
  CLI::App app{"Export what a store holds for pandas or R, in the formats `import` reads back.\n\n"
               "--what draws (default): JSONL (one draw per line with its outcomes, every status) or CSV (one\n"
               "  outcome per row, the long format of `import draws`; a parse_error, refused or api_error draw is\n"
               "  one row with its status and empty outcome and value; an ok draw without outcomes has none).\n"
               "  `import draws` reads both formats back (the draws with their statuses and outcomes).\n"
               "--what judgments: judge votes as subject,subject_provider,item,cluster,judge,judge_provider,label\n"
               "  (the `import votes` format) plus status and the judged draw's condition, config, replicate, draw_id.\n"
               "--what labels: human labels as rater,subject,item,label (the `import labels` format).\n\n"
               "Example:\n"
               "  noisefloor export --store runs/sample/store.sqlite --format csv --out draws.csv\n"
               "  noisefloor export --store runs/sample/store.sqlite --format csv > draws.csv\n"
               "  noisefloor export --store runs/xstest/store.sqlite --what judgments --format csv --out votes.csv\n\n"
               "Draw rows come in draw-key order (subject, item, condition, config, replicate); each varying config "
               "axis is also a column of its own (temperature, top_p, seed, max_tokens, template). A CSV that "
               "would hold no data rows is an error (exit 2, nothing written to --out): e.g. a chat study's draws "
               "carry no outcomes (they are scored by judge votes: --what judgments).",
               "noisefloor export"};
  std::string store_path, format = "jsonl", out, what = "draws";
  app.add_option("--store", store_path, "the store: a SQLite file or a postgresql://... URL")->required();
  app.add_option("--format", format, "jsonl or csv")->check(CLI::IsMember({"jsonl", "csv"}));
  app.add_option("--what", what, "draws (default), judgments or labels")
      ->check(CLI::IsMember({"draws", "judgments", "labels"}));
  app.add_option("--out", out, "output file (written atomically); default or '-': standard output");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  auto store = Store::open_for_reading(store_path);
  if (!store.ok()) return fail("export", store.status());
  const bool csv = format == "csv";
  std::optional<AtomicOutputFile> file;
  if (!out.empty() && out != "-") {
    file.emplace(out);
    if (Status st = file->open(); !st.ok()) return fail("export", st);
  }
  std::ostream& dest = file ? static_cast<std::ostream&>(file->out()) : std::cout;
  LineCountingBuf counter(dest.rdbuf());
  std::ostream counted(&counter);
  size_t rows = 0;
  Status st;
  if (what == "judgments") {
    st = export_judgments(**store, csv, counted, &rows);
  } else if (what == "labels") {
    st = export_human_labels(**store, csv, counted, &rows);
  } else {
    st = csv ? (*store)->export_csv(counted) : (*store)->export_jsonl(counted);
    rows = csv ? (counter.lines() > 0 ? counter.lines() - 1 : 0) : counter.lines();
  }
  if (st.ok()) {
    counted.flush();
    if (!counted || !dest) st = DataLoss((file ? file->path() : std::string("standard output")) + ": write failed");
  }
  if (!st.ok()) return fail("export", st);
  const std::string noun = what == "judgments" ? "judge votes"
                           : what == "labels"  ? "human labels"
                           : csv               ? "rows"
                                               : "draws";
  if (rows == 0) {
    // Nothing to export in this form: say why and where it is instead of an empty file.
    std::string why;
    if (what == "draws") {
      auto n = (*store)->draw_count();
      auto votes = (*store)->judgment_count();
      const int64_t draws = n.ok() ? *n : 0;
      if (draws == 0) {
        why = "the store holds no draws";
      } else {
        why = fmt::format("the store's {} draws carry no outcomes", draws);
        if (votes.ok() && *votes > 0)
          why += fmt::format(" (they are scored by its {} judge votes: --what judgments)", *votes);
        else
          why += " (their statuses and replies: --format jsonl)";
      }
    } else {
      why = fmt::format("the store holds no {}", what == "judgments" ? "judge votes" : "human labels");
    }
    return fail("export", InvalidArgument(fmt::format("{}: no {} to export: {}{}", store_path, noun, why,
                                                      file ? "; nothing written to " + out : "")));
  }
  if (file) {
    if (Status c = file->commit(); !c.ok()) return fail("export", c);
    std::fprintf(stderr, "export: %zu %s to %s\n", rows, noun.c_str(), out.c_str());
  }
  return 0;
}

}  // namespace nf::cli
