#include "metrics/analyze.h"

#include "metrics/condition_order.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/task_kinds.h"
#include "metrics/coverage.h"
#include "metrics/floor_frame.h"
#include "metrics/registry.h"
#include "metrics/reply_language.h"
#include "stats/resample_count.h"
#include "util/strings.h"

namespace nf {

Status check_vote_sizes_flag(const StudyRecord& study, const std::vector<int>& flag_sizes) {
  if (flag_sizes.empty() || !study.spec.is_object() || !study.spec.contains("analyses") ||
      !study.spec["analyses"].is_array())
    return Status::Ok();
  for (const auto& a : study.spec["analyses"]) {
    if (!a.is_object() || a.value("name", "") != "majority_floor" || !a.contains("options") ||
        !a["options"].is_object() || !a["options"].contains("vote_sizes"))
      continue;
    auto declared = majority_vote_sizes(a["options"]);
    if (!declared.ok()) return Status::Ok();  // the analysis reports its own option error
    const std::set<int> want(flag_sizes.begin(), flag_sizes.end()), have(declared->begin(), declared->end());
    if (want == have) return Status::Ok();
    return InvalidArgument(fmt::format(
        "--vote-sizes {} and the study's majority_floor {{\"vote_sizes\": [{}]}} (analyses of study '{}') disagree: "
        "give the vote sizes once: leave out --vote-sizes to use the study's, or name the analyses yourself, e.g. "
        "--analysis floor --analysis 'majority_floor={{\"vote_sizes\":[{}]}}'",
        fmt::join(flag_sizes, ","), fmt::join(*declared, ", "), study.name, fmt::join(flag_sizes, ",")));
  }
  return Status::Ok();
}

Result<nlohmann::json> analyze_store(Store& store, const AnalyzeOptions& options_in) {
  AnalyzeOptions options = options_in;
  nlohmann::json results;
  results["schema"] = "noisefloor.results/1";
  results["tool_version"] = options.tool_version;
  results["store"] = store.path();

  std::vector<AnalysisSpec> analyses = options.analyses;
  auto study = store.get_study();
  bool chat_study = false;
  if (study.ok()) {
    results["study"] = {{"name", study->name}, {"hash", study->hash}, {"seed", study->seed}};
    chat_study = study->spec.value("task", std::string()) == "chat";
    if (options.bootstrap_from_study && study->spec.contains("bootstrap") && study->spec["bootstrap"].is_object()) {
      const nlohmann::json& b = study->spec["bootstrap"];
      if (b.contains("resamples") && b["resamples"].is_number_integer() && b["resamples"].get<int64_t>() > 0)
        options.bootstrap.resamples = b["resamples"].get<int>();
      if (b.contains("seed") && b["seed"].is_number_unsigned()) options.bootstrap.seed = b["seed"].get<uint64_t>();
      if (b.contains("level") && b["level"].is_number() && b["level"].get<double>() > 0 &&
          b["level"].get<double>() < 1)
        options.bootstrap.level = b["level"].get<double>();
    }
    if (analyses.empty() && study->spec.contains("analyses") && study->spec["analyses"].is_array()) {
      for (const auto& a : study->spec["analyses"]) {
        analyses.push_back({a.value("name", ""), a.value("options", nlohmann::json::object())});
      }
    }
  } else {
    results["study"] = nullptr;
  }
  // Warnings the report shows at its top and the CLI says once on stderr (docs/results.md).
  results["warnings"] = nlohmann::json::array();
  // A percentile interval needs a resample in each tail (stats/resample_count.h); a study
  // stored before that rule may still carry fewer.
  if (Status st = stats::check_resamples(options.bootstrap.resamples, options.bootstrap.level,
                                         options.bootstrap_from_study ? "bootstrap.resamples (the study's recorded in "
                                                                        "the store; override with --resamples)"
                                                                      : "--resamples");
      !st.ok())
    return st;
  if (auto w = stats::resamples_warning(options.bootstrap.resamples, options.bootstrap.level, "bootstrap"))
    results["warnings"].push_back(*w);
  // A subject whose answers came from more than one served model pools model versions under
  // one name: an interrupted `run --refresh` after a server upgrade leaves old and new draws
  // side by side, and a plain resume calls the plan complete (tester s9 finding 13). Only for
  // stores of a run study (its spec lists subjects): imported draws record no served model.
  if (study.ok() && study->spec.contains("subjects")) {
    NF_ASSIGN_OR_RETURN(auto served, store.served_models());
    for (const auto& [subject, models] : served)
      if (models.size() > 1)
        results["warnings"].push_back(fmt::format(
            "subject '{}': its answers come from {} served models ({}): every number of this subject pools them. An "
            "interrupted `run --refresh` after a server upgrade leaves such a mix; run it again with --refresh to "
            "finish the refresh",
            subject, models.size(), join(models, ", ")));
  }

  // MCQ replies: the unparsed share per reply language (issue 13 item 3), tallied from the
  // same read of the draws as the status counts.
  const bool by_language = study.ok() && study->spec.value("task", std::string("mcq")) == "mcq";
  ReplyLanguageTally languages;
  std::vector<StatusCount> counts;
  // The floors' input comes from the same read of the draws as the counts and answers when
  // the floors will (most likely) run: named, or the default analyses (issue 14).
  const bool floors_likely =
      std::any_of(analyses.begin(), analyses.end(),
                  [](const AnalysisSpec& a) { return a.name == "floor" || a.name == "majority_floor"; }) ||
      analyses.empty();
  std::optional<FloorInput> floor_input;
  if (by_language && floors_likely) {
    Status floor_scan = Status::Ok();  // a failed outcome scan: the floors read again and report it
    NF_ASSIGN_OR_RETURN(counts, read_status_and_floor_input(
                                    store, options.include_cached,
                                    [&](std::string_view subject, std::string_view config, std::string_view status,
                                        std::string_view content) { languages.add(subject, config, status, content); },
                                    &floor_input, &floor_scan));
  } else if (by_language) {
    NF_ASSIGN_OR_RETURN(counts, store.status_counts_and_answers([&](std::string_view subject, std::string_view config,
                                                                    std::string_view status, std::string_view content) {
      languages.add(subject, config, status, content);
    }));
  } else {
    NF_ASSIGN_OR_RETURN(counts, store.status_counts());
  }
  std::set<std::string> conditions;
  {
    std::map<std::tuple<std::string, std::string, std::string>, std::map<std::string, int64_t>> cells;
    for (const auto& c : counts) {
      cells[{c.subject, c.config, c.condition}][c.status] += c.count;
      conditions.insert(c.condition);
    }
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [k, by] : cells) {
      const auto& [subject, config, condition] = k;
      int64_t total = 0;
      for (const auto& [s, n] : by) total += n;
      auto get = [&](const char* s) { auto it = by.find(s); return it == by.end() ? int64_t{0} : it->second; };
      const int64_t answered = total - get("api_error");
      rows.push_back({{"subject", subject},
                      {"config", config},
                      {"condition", condition},
                      {"total", total},
                      {"ok", get("ok")},
                      {"parse_error", get("parse_error")},
                      {"api_error", get("api_error")},
                      {"refused", get("refused")},
                      {"parse_error_rate", answered > 0 ? nlohmann::json(static_cast<double>(get("parse_error")) /
                                                                   static_cast<double>(answered))
                                                  : nlohmann::json(nullptr)}});
    }
    results["draws"] = {{"rows", rows}};
    // How much of the recorded plan the store holds (null without a plan: imported draws).
    results["plan"] = nullptr;
    if (study.ok()) {
      NF_ASSIGN_OR_RETURN(results["plan"], plan_completeness(*study, store, counts));
    }
    if (by_language && !counts.empty()) results["draws"]["by_language"] = languages.rows();
  }

  NF_ASSIGN_OR_RETURN(const int64_t n_judgments, store.judgment_count());
  NF_ASSIGN_OR_RETURN(const auto human_labels, store.human_labels());
  if (analyses.empty() && !chat_study) {
    if (!counts.empty() || (n_judgments == 0 && human_labels.empty())) {
      analyses.push_back({"floor", nlohmann::json::object()});
      analyses.push_back({"majority_floor", {{"vote_sizes", {3}}}});
    }

    if (conditions.count("none") || conditions.count("shuffle") || conditions.count("remove_answer") ||
        conditions.count("remove_context"))
      analyses.push_back({"mcq_robustness", nlohmann::json::object()});
    if (conditions.count("ref_white_man_private")) analyses.push_back({"fairness", nlohmann::json::object()});
  }

  // The judge analyses run whenever the store holds their data, unless the command line
  // chose the analyses explicitly.
  if (options.analyses.empty()) {
    auto listed = [&](const char* name) {
      return std::any_of(analyses.begin(), analyses.end(), [&](const AnalysisSpec& a) { return a.name == name; });
    };
    if (n_judgments > 0 && !listed("judge_panel")) analyses.push_back({"judge_panel", nlohmann::json::object()});
    if (n_judgments > 0 && !human_labels.empty() && !listed("human_validity"))
      analyses.push_back({"human_validity", nlohmann::json::object()});
  }
  // Option probabilities (issue 6 item 7): whenever a subject of the study asked for
  // logprobs (skipped, with the reason, when none of their draws has option probabilities).
  if (study.ok() && study->spec.contains("subjects") && study->spec["subjects"].is_array())
    for (const auto& s : study->spec["subjects"])
      if (s.is_object() && s.value("logprobs", 0) > 0 &&
          std::none_of(analyses.begin(), analyses.end(), [](const AnalysisSpec& a) { return a.name == "option_probs"; })) {
        analyses.push_back({"option_probs", nlohmann::json::object()});
        break;
      }

  AnalysisContext ctx(store, options.bootstrap);
  ctx.has_study = study.ok();
  if (study.ok()) {
    ctx.study = *study;
    // The task's derived outcomes (mcq: correct from choice) stay out of the pooled floor. A
    // store without a task (imported draws) has only independent outcomes.
    if (study->spec.is_object() && study->spec.contains("task") && study->spec["task"].is_string())
      for (const auto& [derived, source] : derived_outcomes_of(study->spec["task"].get<std::string>()))
        ctx.derived_outcomes[derived] = source;
  }
  ctx.include_cached = options.include_cached;
  if (floor_input) ctx.preload_floor_input(std::move(*floor_input));
  // floor and majority_floor: every vote size they will ask for, so the first one computes
  // them all with one batch of bootstrap resamples (AnalysisContext::floor_rows; the same
  // values as one batch per analysis). Options that do not parse plan nothing: the analysis
  // reports its own error when it runs.
  for (const auto& a : analyses) {
    if (a.name == "floor") ctx.planned_vote_sizes.push_back(1);
    if (a.name == "majority_floor")
      if (auto sizes = majority_vote_sizes(a.options); sizes.ok())
        ctx.planned_vote_sizes.insert(ctx.planned_vote_sizes.end(), sizes->begin(), sizes->end());
  }
  results["analyses"] = nlohmann::json::object();
  for (const auto& a : analyses) {
    const AnalysisEntry* entry = find_analysis(a.name);
    if (entry == nullptr)
      return InvalidArgument(
          fmt::format("analyses: unknown analysis '{}'{}", a.name, did_you_mean(a.name, analysis_names())));
    NF_ASSIGN_OR_RETURN(auto section, run_analysis(*entry, ctx, a.options));
    results["analyses"][a.name] = std::move(section);
  }
  // Conditions in the study's order, not alphabetical (metrics/condition_order.h).
  if (study.ok() && study->spec.contains("conditions") && study->spec["conditions"].is_array()) {
    std::vector<std::string> order;
    for (const auto& c : study->spec["conditions"])
      if (c.is_string()) order.push_back(c.get<std::string>());
    order_by_study_conditions(results, order);
  }
  return results;
}

}  // namespace nf
