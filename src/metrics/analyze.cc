#include "metrics/analyze.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "metrics/fairness.h"
#include "metrics/human_validity.h"
#include "metrics/judge_panel.h"
#include "metrics/mcq_robustness.h"
#include "metrics/option_probs.h"
#include "metrics/rerun.h"
#include "util/strings.h"

namespace nf {

namespace {

Result<std::vector<int>> vote_sizes_of(const nlohmann::json& options) {
  std::vector<int> sizes;
  if (!options.is_object() || !options.contains("vote_sizes")) return std::vector<int>{3};
  const auto& v = options["vote_sizes"];
  if (!v.is_array() || v.empty()) return InvalidArgument("majority_floor.vote_sizes: expected a non-empty list");
  for (const auto& x : v) {
    if (!x.is_number_integer() || x.get<int64_t>() < 1)
      return InvalidArgument(fmt::format("majority_floor.vote_sizes: expected positive integers, got {}", x.dump()));
    sizes.push_back(x.get<int>());
  }
  return sizes;
}

nlohmann::json bootstrap_json(const BootstrapOptions& b) {
  return {{"resamples", b.resamples}, {"seed", b.seed}, {"level", b.level}, {"method", "percentile, item-cluster"}};
}

}  // namespace

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

  NF_ASSIGN_OR_RETURN(auto counts, store.status_counts());
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
                      {"parse_rate", answered > 0 ? nlohmann::json(static_cast<double>(get("parse_error")) /
                                                                   static_cast<double>(answered))
                                                  : nlohmann::json(nullptr)}});
    }
    results["draws"] = {{"rows", rows}};
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
  NF_ASSIGN_OR_RETURN(auto rows, store.outcome_rows(options.include_cached));
  results["analyses"] = nlohmann::json::object();
  const std::vector<std::string> known = {"floor", "majority_floor", "mcq_robustness", "judge_panel",
                                         "human_validity", "fairness", "rerun"};
  for (const auto& a : analyses) {
    if (a.name == "floor") {
      NF_ASSIGN_OR_RETURN(auto fr, compute_floor(rows, 1, options.bootstrap));
      nlohmann::json j;
      j["method"] =
          "share of disagreeing replicate pairs per item, over every unordered pair of replicates of every item; "
          "pooled = sums over outcomes";
      j["source"] = "seed 000 §III.B, §IV.A";
      j["bootstrap"] = bootstrap_json(options.bootstrap);
      j["rows"] = nlohmann::json::array();
      for (const auto& r : fr) j["rows"].push_back(floor_row_to_json(r));
      results["analyses"]["floor"] = j;
    } else if (a.name == "majority_floor") {
      NF_ASSIGN_OR_RETURN(auto sizes, vote_sizes_of(a.options));
      nlohmann::json j;
      j["method"] =
          "every unordered pair of disjoint R'-subsets of an item's replicates; each subset votes its unique modal "
          "value; ties are undetermined and excluded";
      j["source"] = "seed 000 §D";
      j["bootstrap"] = bootstrap_json(options.bootstrap);
      j["rows"] = nlohmann::json::array();
      // The most ok replicates any item has in any cell (for one outcome).
      int max_reps = 0;
      {
        std::map<std::string, int> count;
        for (const auto& o : rows)
          max_reps = std::max(max_reps, ++count[o.subject + "|" + o.config + "|" + o.condition + "|" + o.item + "|" +
                                                o.outcome]);
      }
      j["warnings"] = nlohmann::json::array();
      for (int r : sizes) {
        if (2 * r > max_reps)
          j["warnings"].push_back(fmt::format(
              "vote size {} needs at least {} replicates per item (two disjoint vote sets); the store has at most {}",
              r, 2 * r, max_reps));
        NF_ASSIGN_OR_RETURN(auto fr, compute_floor(rows, r, options.bootstrap));
        for (const auto& row : fr) j["rows"].push_back(floor_row_to_json(row));
      }
      results["analyses"]["majority_floor"] = j;
    } else if (a.name == "mcq_robustness") {
      NF_ASSIGN_OR_RETURN(auto mr, compute_mcq_robustness(rows, options.bootstrap.level));
      nlohmann::json j;
      j["method"] =
          "one draw per item and condition (lowest common replicate); accuracy none vs shuffle with exact two-sided "
          "McNemar on b, c; inappropriate-confident rate under removal with Wilson intervals";
      j["source"] = "seed 004 §2.4, §3.5";
      j["rows"] = nlohmann::json::array();
      for (const auto& r : mr) j["rows"].push_back(mcq_robustness_row_to_json(r));
      results["analyses"]["mcq_robustness"] = j;
    } else if (a.name == "judge_panel" || a.name == "human_validity") {
      nlohmann::json j;
      j["source"] = a.name == "judge_panel" ? "seed 004 §2.6, §3.3" : "seed 004 §3.1, §3.4";
      NF_ASSIGN_OR_RETURN(auto judgments, store.judgments());
      if (judgments.empty()) {
        j["skipped"] = "the store holds no judgments (noisefloor import votes | missing-info, or noisefloor judge)";
        results["analyses"][a.name] = j;
        continue;
      }
      int64_t votes = 0, parse_errors = 0, api_errors = 0;
      for (const auto& r : judgments) {
        if (r.status == "ok" && r.label) ++votes;
        if (r.status == "parse_error") ++parse_errors;
        if (r.status == "api_error") ++api_errors;
      }
      if (votes == 0) {  // e.g. every judge call failed: report that, do not fail the analysis
        j["skipped"] = fmt::format(
            "the store holds {} judgments but no votes ({} api_error, {} parse_error, {} without a label); "
            "api_errors are retried by the next `noisefloor judge`",
            judgments.size(), api_errors, parse_errors,
            static_cast<int64_t>(judgments.size()) - api_errors - parse_errors);
        results["analyses"][a.name] = j;
        continue;
      }
      NF_ASSIGN_OR_RETURN(auto panel, build_panel(judgments));
      if (a.name == "judge_panel") {
        JudgePanelOptions jo;
        jo.bootstrap = options.bootstrap;
        if (a.options.is_object() && a.options.contains("focus_subject")) {
          if (!a.options["focus_subject"].is_string())
            return InvalidArgument("judge_panel.focus_subject: expected a subject name");
          jo.focus_subject = a.options["focus_subject"].get<std::string>();
        }
        NF_ASSIGN_OR_RETURN(auto r, judge_panel_analysis(panel, jo));
        NF_ASSIGN_OR_RETURN(auto conditions_of_draws, store.judged_draw_conditions());
        NF_ASSIGN_OR_RETURN(r["by_condition"],
                            judge_rates_by_condition(judgments, conditions_of_draws, options.bootstrap));
        j["method"] =
            "per judge x subject appropriate-vote rates; Fleiss kappa over units rated by every judge; raw "
            "own-minus-peer gap and difference-in-differences; vote-level logistic regression label ~ C(subject) + "
            "C(judge) + same-provider term(s) with prompt-clustered bootstrap CIs; exact permutation over all "
            "bijections of own judges to subjects; leave-own-provider-out; leave-one-judge-out rank stability; "
            "bootstrap probability of ranking first/last";
        j.update(r);
      } else {
        if (human_labels.empty()) {
          j["skipped"] = "the store holds no human labels (noisefloor import labels | missing-info)";
          results["analyses"][a.name] = j;
          continue;
        }
        HumanValidityOptions ho;
        ho.bootstrap = options.bootstrap;
        if (a.options.is_object() && a.options.contains("strata_fields")) {
          ho.strata_fields.clear();
          for (const auto& f : a.options["strata_fields"]) {
            if (!f.is_string()) return InvalidArgument("human_validity.strata_fields: expected field names");
            ho.strata_fields.push_back(f.get<std::string>());
          }
        }
        NF_ASSIGN_OR_RETURN(auto items, store.items());
        NF_ASSIGN_OR_RETURN(auto r, human_validity_analysis(panel, human_labels, items, ho));
        j["method"] =
            "per-rater rates and strict-majority consensus; Fleiss kappa across raters; pairwise raw agreement, Cohen "
            "kappa and Gwet AC1; judge-minus-rater paired differences; aggregation rules against each rater (kappa, "
            "false-lenient, false-strict); panel vote-count calibration; item-metadata strata; prompt-clustered "
            "bootstrap CIs";
        j.update(r);
      }
      results["analyses"][a.name] = j;
    } else if (a.name == "fairness") {  // metrics/fairness.h (seed 000 §III.B, §IV, S2, S3, S8, S10, S12)
      nlohmann::json opts = a.options.is_object() ? a.options : nlohmann::json::object();
      if (!opts.contains("registry") && study.ok() && study->spec.contains("dataset") &&
          study->spec["dataset"].value("format", "") == "vignettes")
        opts["registry"] = study->spec["dataset"].value("path", "");
      NF_ASSIGN_OR_RETURN(auto fo, FairnessOptions::from_json(opts));
      NF_ASSIGN_OR_RETURN(auto fr, compute_fairness(rows, fo, options.bootstrap));
      nlohmann::json j;
      j["method"] =
          "per-action floors on the reference condition with vignette-cluster bootstrap CIs; flip rate per contrast "
          "and action over every reference x condition replicate pair beside the floor (its expectation under no "
          "effect); signed exact McNemar with one draw per case; BH across non-control contrasts; credible only above "
          "the largest control arm; signed action-rate disparity with a vignette-cluster bootstrap CI";
      j["source"] = "seed 000 §III.B, §IV, S2, S3, S8, S10, S12";
      j["bootstrap"] = bootstrap_json(options.bootstrap);
      j["rows"] = nlohmann::json::array();
      for (const auto& r : fr) j["rows"].push_back(fairness_result_to_json(r));
      j["descriptors"] = nlohmann::json::array();
      if (!fo.registry.empty()) {
        NF_ASSIGN_OR_RETURN(j["descriptors"], descriptor_lengths(fo.registry));
      }
      results["analyses"]["fairness"] = j;
    } else if (a.name == "rerun") {  // metrics/rerun.h (seed 002 §4)
      NF_ASSIGN_OR_RETURN(auto ro, rerun_options_from_json(a.options, options.bootstrap));
      NF_ASSIGN_OR_RETURN(auto in, read_rerun_runs(store, options.include_cached));
      NF_ASSIGN_OR_RETURN(results["analyses"]["rerun"], rerun_analysis(in.first, in.second, ro));
    } else {
      return InvalidArgument(fmt::format("analyses: unknown analysis '{}'{}", a.name, did_you_mean(a.name, known)));
    }
  }

  // Option probabilities (issue 6 item 7): whenever a subject of the study asked for
  // logprobs and its draws stored per-option probabilities.
  std::vector<std::string> logprob_subjects;
  if (study.ok() && study->spec.contains("subjects") && study->spec["subjects"].is_array())
    for (const auto& s : study->spec["subjects"])
      if (s.is_object() && s.value("logprobs", 0) > 0 && s.contains("name") && s["name"].is_string())
        logprob_subjects.push_back(s["name"].get<std::string>());
  if (!logprob_subjects.empty()) {
    NF_ASSIGN_OR_RETURN(auto op_draws, read_option_prob_draws(store, logprob_subjects, options.include_cached));
    if (!op_draws.empty()) {
      nlohmann::json j;
      j["method"] =
          "per ok draw, the probability of each shown option from the first answer token's top logprobs (\"B\" and "
          "\" B\" merged); mean probability of the gold option over draws where it is known; share of draws whose "
          "most likely known option is the free-form answer; options absent from the top list are unknown, not zero";
      j["source"] = "issue 6 item 7; seed 004 §2.4";
      j["rows"] = nlohmann::json::array();
      for (const auto& r : compute_option_probs(op_draws)) j["rows"].push_back(option_prob_row_to_json(r));
      results["analyses"]["option_probs"] = j;
    }
  }
  return results;
}

}  // namespace nf
