// noisefloor import | export
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "data/draws_import.h"
#include "data/judge_import.h"
#include "runner/import.h"
#include "store/store.h"
#include "util/exit_code.h"

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
  // An imported missing vote is not a vote: it is stored like a judge API failure.
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

Status import_labels(Store& store, const std::vector<LabelRecord>& labels) {
  std::vector<HumanLabelRow> rows;
  rows.reserve(labels.size());
  for (const auto& l : labels) rows.push_back({l.rater, l.subject, l.item, l.label});
  return store.put_human_labels(rows);
}

}  // namespace

int cmd_import(int argc, char** argv) {
  CLI::App app{"Import published data into a store so the same analyses run on it.\n\n"
               "  noisefloor import draws FILE --store S.sqlite\n"
               "FILE is CSV (header row) or JSONL with the long-format columns\n"
               "  subject,item,cluster,condition,config,replicate,outcome,value\n"
               "one row per outcome of one draw (cluster may be empty = item). Then:\n"
               "  noisefloor analyze --store S.sqlite --out DIR --vote-sizes 3,5\n\n"
               "  noisefloor import votes FILE --store S.sqlite\n"
               "judge votes, columns subject,subject_provider,item,cluster,judge,judge_provider,label\n"
               "(label 1/0, empty = missing vote).\n"
               "  noisefloor import labels FILE --store S.sqlite\n"
               "human ratings, columns rater,subject,item,label.\n"
               "  noisefloor import missing-info DIR --store S.sqlite\n"
               "the released files of seed 004 (votes.jsonl, key.json, labels_<RATER>.csv,\n"
               "perturbation_audit.csv). Subject providers come from the model name (gpt- openai,\n"
               "opus-/claude- anthropic, grok- xai, gemini- google); override with --provider M=P.",
               "noisefloor import"};
  std::string format, file, store_path, study_name = "imported";
  std::vector<std::string> provider_overrides;
  app.add_option("format", format, "what FILE holds: draws | votes | labels | missing-info")
      ->required()
      ->check(CLI::IsMember({"draws", "votes", "labels", "missing-info"}));
  app.add_option("file", file, "the file (.csv or .jsonl) or, for missing-info, the directory")->required();
  app.add_option("--store", store_path, "the SQLite store to write (created if missing)")->required();
  app.add_option("--study-name", study_name, "study name recorded in a new store (default: imported)");
  app.add_option("--provider", provider_overrides, "missing-info: MODEL=PROVIDER provider of a subject model");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  if (format == "draws") {
    auto rows = read_long_draws(file);
    if (!rows.ok()) return fail("import", rows.status());
    auto store = Store::open(store_path);
    if (!store.ok()) return fail("import", store.status());
    auto sum = import_long_draws(*rows, **store, study_name);
    if (!sum.ok()) return fail("import", sum.status());
    std::fprintf(stderr, "import: %lld rows -> %lld draws of %lld items into %s\n",
                 static_cast<long long>(sum->rows), static_cast<long long>(sum->draws),
                 static_cast<long long>(sum->items), store_path.c_str());
    return 0;
  }
  ProviderMap providers;
  for (const auto& o : provider_overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.size())
      return fail("import", InvalidArgument("--provider: expected MODEL=PROVIDER, got '" + o + "'"));
    providers.overrides[o.substr(0, eq)] = o.substr(eq + 1);
  }
  if (format == "votes") {
    auto votes = read_votes(file);
    if (!votes.ok()) return fail("import", votes.status());
    auto store = Store::open(store_path);
    if (!store.ok()) return fail("import", store.status());
    Status st = ensure_study(**store, study_name);
    if (st.ok()) st = import_votes(**store, *votes);
    if (!st.ok()) return fail("import", st);
    std::fprintf(stderr, "import: %zu votes into %s\n", votes->size(), store_path.c_str());
    return 0;
  }
  if (format == "labels") {
    auto labels = read_labels(file);
    if (!labels.ok()) return fail("import", labels.status());
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
  if (st.ok()) st = import_votes(**store, data->votes);
  if (st.ok()) st = import_labels(**store, data->labels);
  if (!st.ok()) return fail("import", st);
  std::fprintf(stderr, "import: %zu votes, %zu human labels (raters %zu), %zu items into %s\n", data->votes.size(),
               data->labels.size(), data->raters.size(), data->items.size(), store_path.c_str());
  return 0;
}

int cmd_export(int argc, char** argv) {
  CLI::App app{"Export a store's draws for pandas or R: JSONL (one draw per line, with outcomes) or CSV (one "
               "outcome per row, the long format `import draws` reads).\n\nExample:\n"
               "  noisefloor export --store runs/sample/store.sqlite --format csv --out draws.csv",
               "noisefloor export"};
  std::string store_path, format = "jsonl", out;
  app.add_option("--store", store_path, "the SQLite store")->required();
  app.add_option("--format", format, "jsonl or csv")->check(CLI::IsMember({"jsonl", "csv"}));
  app.add_option("--out", out, "output file")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  auto store = Store::open_existing(store_path);
  if (!store.ok()) return fail("export", store.status());
  Status st = format == "csv" ? (*store)->export_csv(out) : (*store)->export_jsonl(out);
  if (!st.ok()) return fail("export", st);
  return 0;
}

}  // namespace nf::cli
