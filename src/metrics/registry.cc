#include "metrics/registry.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "metrics/bbq_bias.h"
#include "metrics/envelope.h"
#include "metrics/coverage.h"
#include "metrics/fairness.h"
#include "metrics/floor_frame.h"
#include "metrics/human_validity.h"
#include "metrics/judge_panel.h"
#include "metrics/mcq_robustness.h"
#include "metrics/option_probs.h"
#include "metrics/paired_subjects.h"
#include "metrics/rerun.h"

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
  return {{"resamples", b.resamples},
          {"seed", b.seed},
          {"level", b.level},
          {"method", "studentized (bootstrap-t), item-cluster; percentile_low/high kept beside it"}};
}

/// Refuses option keys an analysis does not know (a typo must not silently run defaults).
Status check_option_keys(const std::string& analysis, const nlohmann::json& options,
                         const std::vector<std::string>& known) {
  if (options.is_null()) return Status::Ok();
  if (!options.is_object())
    return InvalidArgument(fmt::format("{}: options must be a JSON object, got {}", analysis, options.dump()));
  for (const auto& [k, v] : options.items()) {
    if (std::find(known.begin(), known.end(), k) == known.end())
      return InvalidArgument(fmt::format("{}.{}: unknown option (known: {})", analysis, k,
                                         known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
  }
  return Status::Ok();
}

Result<nlohmann::json> run_floor(AnalysisContext& ctx, const nlohmann::json& options) {
  NF_RETURN_IF_ERROR(check_option_keys("floor", options, {}));
  NF_ASSIGN_OR_RETURN(const std::vector<FloorRow>* fr_rows, ctx.floor_rows(1));
  const std::vector<FloorRow>& fr = *fr_rows;
  nlohmann::json j;
  j["method"] =
      "share of disagreeing replicate pairs per item, over every unordered pair of replicates of every item; "
      "pooled = sums over the independent outcomes (a task's derived outcomes, e.g. mcq correct from choice, "
      "are left out: their pairs are their source's pairs again)";
  j["source"] = "seed 000 §III.B, §IV.A";
  j["bootstrap"] = bootstrap_json(ctx.bootstrap);
  j["rows"] = nlohmann::json::array();
  for (const auto& r : fr) j["rows"].push_back(floor_row_to_json(r));
  NF_RETURN_IF_ERROR(add_planned_coverage(j["rows"], ctx));
  return j;
}

Result<nlohmann::json> run_majority_floor(AnalysisContext& ctx, const nlohmann::json& options) {
  NF_RETURN_IF_ERROR(check_option_keys("majority_floor", options, {"vote_sizes"}));
  NF_ASSIGN_OR_RETURN(auto sizes, vote_sizes_of(options));
  nlohmann::json j;
  j["method"] =
      "every unordered pair of disjoint R'-subsets of an item's replicates; each subset votes its unique modal "
      "value; ties are undetermined and excluded";
  j["source"] = "seed 000 §D";
  j["bootstrap"] = bootstrap_json(ctx.bootstrap);
  j["rows"] = nlohmann::json::array();
  // The most ok replicates any item has in any cell (for one outcome).
  NF_ASSIGN_OR_RETURN(const FloorInput* input, ctx.floor_input());
  const int max_reps = input->max_item_replicates();
  j["warnings"] = nlohmann::json::array();
  for (int r : sizes) {
    if (r % 2 == 0)
      j["warnings"].push_back(fmt::format(
          "vote size {} is even: a vote set split {}-{} is a tie, its comparisons are left out, and the floor is a "
          "rate among comparisons where both vote sets agreed internally (ties excluded: see each row's "
          "tie_excluded); an odd vote size has no ties on a 0/1 outcome",
          r, r / 2, r / 2));
    if (2 * r > max_reps)
      j["warnings"].push_back(fmt::format(
          "vote size {} needs at least {} replicates per item (two disjoint vote sets); the store has at most {}", r,
          2 * r, max_reps));
    NF_ASSIGN_OR_RETURN(const std::vector<FloorRow>* fr, ctx.floor_rows(r));
    for (const auto& row : *fr) j["rows"].push_back(floor_row_to_json(row));
  }
  NF_RETURN_IF_ERROR(add_planned_coverage(j["rows"], ctx));
  return j;
}

Result<nlohmann::json> run_mcq_robustness(AnalysisContext& ctx, const nlohmann::json& options) {
  NF_RETURN_IF_ERROR(check_option_keys("mcq_robustness", options, {"margin"}));
  NF_ASSIGN_OR_RETURN(const auto* rows, ctx.rows());
  NF_ASSIGN_OR_RETURN(auto mr, compute_mcq_robustness(*rows, ctx.bootstrap.level));
  nlohmann::json j;
  j["method"] =
      "one draw per item and condition (lowest common replicate); accuracy none vs shuffle with exact two-sided "
      "McNemar on b, c; inappropriate-confident rate under removal with Wilson intervals";
  j["source"] = "seed 004 §2.4, §3.5";
  j["rows"] = nlohmann::json::array();
  for (const auto& r : mr) j["rows"].push_back(mcq_robustness_row_to_json(r));
  return j;
}

/// The shared prelude of the two judge analyses: the panel, or a `skipped` section.
Result<nlohmann::json> run_judge_analysis(const std::string& name, AnalysisContext& ctx,
                                          const nlohmann::json& options) {
  nlohmann::json j;
  j["source"] = name == "judge_panel" ? "seed 004 §2.6, §3.3" : "seed 004 §3.1, §3.4";
  NF_ASSIGN_OR_RETURN(auto judgments, ctx.store.judgments());
  if (judgments.empty()) {
    j["skipped"] = "the store holds no judgments (noisefloor import votes | missing-info, or noisefloor judge)";
    return j;
  }
  int64_t votes = 0, parse_errors = 0, api_errors = 0;
  for (const auto& r : judgments) {
    if (r.status == "ok" && r.label) ++votes;
    if (r.status == "parse_error") ++parse_errors;
    if (r.status == "api_error" && !is_imported_missing_vote(r)) ++api_errors;
  }
  if (votes == 0) {  // e.g. every judge call failed: report that, do not fail the analysis
    j["skipped"] = fmt::format(
        "the store holds {} judgments but no votes ({} api_error, {} parse_error, {} without a label); "
        "api_errors are retried by the next `noisefloor judge`",
        judgments.size(), api_errors, parse_errors,
        static_cast<int64_t>(judgments.size()) - api_errors - parse_errors);
    return j;
  }
  NF_ASSIGN_OR_RETURN(auto panel, build_panel(judgments));
  if (name == "judge_panel") {
    NF_RETURN_IF_ERROR(check_option_keys("judge_panel", options, {"focus_subject"}));
    JudgePanelOptions jo;
    jo.bootstrap = ctx.bootstrap;
    if (options.is_object() && options.contains("focus_subject")) {
      if (!options["focus_subject"].is_string())
        return InvalidArgument("judge_panel.focus_subject: expected a subject name");
      jo.focus_subject = options["focus_subject"].get<std::string>();
    }
    NF_ASSIGN_OR_RETURN(auto r, judge_panel_analysis(panel, jo));
    // What label 1 means, for the report's wording (the study's judge criterion).
    std::string criterion;
    if (ctx.has_study && ctx.study.spec.is_object() && ctx.study.spec.contains("judge") &&
        ctx.study.spec["judge"].is_object() && ctx.study.spec["judge"].contains("criterion") &&
        ctx.study.spec["judge"]["criterion"].is_string())
      criterion = ctx.study.spec["judge"]["criterion"].get<std::string>();
    if (!criterion.empty()) j["criterion"] = criterion;
    j["rate_label"] = judge_rate_label(criterion);
    NF_ASSIGN_OR_RETURN(auto conditions_of_draws, ctx.store.judged_draw_conditions());
    NF_ASSIGN_OR_RETURN(r["by_condition"], judge_rates_by_condition(judgments, conditions_of_draws, ctx.bootstrap));
    j["method"] =
        "per judge x subject appropriate-vote rates; Fleiss kappa over units rated by every judge; raw "
        "own-minus-peer gap and difference-in-differences; vote-level logistic regression label ~ C(subject) + "
        "C(judge) + same-provider term(s) with prompt-clustered bootstrap CIs; exact permutation over all "
        "bijections of own judges to subjects; leave-own-provider-out; leave-one-judge-out rank stability; "
        "bootstrap probability of ranking first/last";
    j.update(r);
    return j;
  }
  NF_RETURN_IF_ERROR(check_option_keys("human_validity", options, {"strata_fields"}));
  NF_ASSIGN_OR_RETURN(const auto human_labels, ctx.store.human_labels());
  if (human_labels.empty()) {
    j["skipped"] = "the store holds no human labels (noisefloor import labels | missing-info)";
    return j;
  }
  HumanValidityOptions ho;
  ho.bootstrap = ctx.bootstrap;
  if (options.is_object() && options.contains("strata_fields")) {
    ho.strata_fields.clear();
    if (!options["strata_fields"].is_array())
      return InvalidArgument("human_validity.strata_fields: expected a list of field names");
    for (const auto& f : options["strata_fields"]) {
      if (!f.is_string()) return InvalidArgument("human_validity.strata_fields: expected field names");
      ho.strata_fields.push_back(f.get<std::string>());
    }
  }
  NF_ASSIGN_OR_RETURN(auto items, ctx.store.items());
  NF_ASSIGN_OR_RETURN(auto r, human_validity_analysis(panel, human_labels, items, ho));
  j["method"] =
      "per-rater rates and strict-majority consensus; Fleiss kappa across raters; pairwise raw agreement, Cohen "
      "kappa and Gwet AC1; judge-minus-rater paired differences; aggregation rules against each rater (kappa, "
      "false-lenient, false-strict); panel vote-count calibration; item-metadata strata; prompt-clustered "
      "bootstrap CIs";
  j.update(r);
  return j;
}

Result<nlohmann::json> run_fairness(AnalysisContext& ctx, const nlohmann::json& options) {
  // metrics/fairness.h (seed 000 §III.B, §IV, S2, S3, S8, S10, S12)
  nlohmann::json opts = options.is_object() ? options : nlohmann::json::object();
  if (!opts.contains("registry") && ctx.has_study && ctx.study.spec.contains("dataset") &&
      ctx.study.spec["dataset"].value("format", "") == "vignettes")
    opts["registry"] = ctx.study.spec["dataset"].value("path", "");
  NF_ASSIGN_OR_RETURN(auto fo, FairnessOptions::from_json(opts));
  NF_ASSIGN_OR_RETURN(const auto* rows, ctx.rows());
  NF_ASSIGN_OR_RETURN(auto fr, compute_fairness(*rows, fo, ctx.bootstrap));
  nlohmann::json j;
  j["method"] =
      "per-action floors on the reference condition with vignette-cluster bootstrap CIs; flip rate per contrast "
      "and action over every reference x condition replicate pair beside the floor (its expectation under no "
      "effect); signed exact McNemar with one draw per case; BH across non-control contrasts; credible only above "
      "the largest control arm; signed action-rate disparity with a vignette-cluster bootstrap CI";
  j["source"] = "seed 000 §III.B, §IV, S2, S3, S8, S10, S12";
  j["bootstrap"] = bootstrap_json(ctx.bootstrap);
  j["bootstrap"]["method"] =
      "floors and flip rates: studentized (bootstrap-t), vignette-cluster; paired difference and disparity: "
      "percentile, vignette-cluster";
  j["rows"] = nlohmann::json::array();
  for (const auto& r : fr) j["rows"].push_back(fairness_result_to_json(r));
  for (auto& row : j["rows"]) NF_RETURN_IF_ERROR(add_planned_coverage(row["floors"], ctx));
  j["descriptors"] = nlohmann::json::array();
  if (!fo.registry.empty()) {
    NF_ASSIGN_OR_RETURN(j["descriptors"], descriptor_lengths(fo.registry));
  }
  return j;
}

/// Subjects whose study entry asked for `logprobs` (option_probs reads only their draws);
/// `options.subjects` overrides (for an imported store).
Result<nlohmann::json> run_option_probs(AnalysisContext& ctx, const nlohmann::json& options) {
  NF_RETURN_IF_ERROR(check_option_keys("option_probs", options, {"subjects"}));
  std::vector<std::string> subjects;
  if (options.is_object() && options.contains("subjects")) {
    if (!options["subjects"].is_array()) return InvalidArgument("option_probs.subjects: expected a list of names");
    for (const auto& s : options["subjects"]) {
      if (!s.is_string()) return InvalidArgument("option_probs.subjects: expected subject names");
      subjects.push_back(s.get<std::string>());
    }
  } else if (ctx.has_study && ctx.study.spec.contains("subjects") && ctx.study.spec["subjects"].is_array()) {
    for (const auto& s : ctx.study.spec["subjects"])
      if (s.is_object() && s.value("logprobs", 0) > 0 && s.contains("name") && s["name"].is_string())
        subjects.push_back(s["name"].get<std::string>());
  }
  nlohmann::json j;
  j["method"] =
      "per ok draw, the probability of each shown option at the answer token from its top logprobs (\"B\" and "
      "\" B\" merged; the sampled token's own probability when the list lacks it); mean probability of the gold "
      "option over the draws whose top list carried it (not conditioned on the answer) and over every draw where "
      "it is known (including a gold known only as the sampled answer: conditioned on a right answer); share of "
      "the draws with at least two known options whose most likely known option is the free-form answer (one "
      "known option is its own argmax: undefined); options absent from the top list are unknown, not zero";
  j["source"] = "issue 6 item 7; seed 004 §2.4";
  if (subjects.empty()) {
    j["skipped"] = "no subject asked for logprobs (set `logprobs: N` on a subject, or pass {\"subjects\": [...]})";
    return j;
  }
  NF_ASSIGN_OR_RETURN(auto op_draws, read_option_prob_draws(ctx.store, subjects, ctx.include_cached));
  j["rows"] = nlohmann::json::array();
  const auto rows = compute_option_probs(op_draws);
  for (const auto& r : rows) j["rows"].push_back(option_prob_row_to_json(r));
  j["warnings"] = option_prob_warnings(rows);
  if (j["rows"].empty())
    j["skipped"] = fmt::format(
        "no ok MCQ draw of {} carries option probabilities (the server returned no logprobs, or the draws were "
        "imported without them); `logprobs: N` on a subject asks an OpenAI-compatible server for them",
        fmt::join(subjects, ", "));
  return j;
}

Result<nlohmann::json> run_paired_subjects(AnalysisContext& ctx, const nlohmann::json& options) {
  // metrics/paired_subjects.h
  NF_RETURN_IF_ERROR(check_option_keys("paired_subjects", options, {}));
  NF_ASSIGN_OR_RETURN(const auto* rows, ctx.rows());
  NF_ASSIGN_OR_RETURN(auto ps, compute_paired_subjects(*rows));
  nlohmann::json j = paired_subjects_to_json(ps);
  j["method"] =
      "per subject, the mean outcome over all ok draws (accuracy for a 0/1 outcome); per pair of subjects on the "
      "items both answered, each item's strict-majority answer over replicates (ties undetermined, left out), "
      "exact two-sided McNemar on the discordant items, Holm-adjusted over every pair";
  j["source"] = "McNemar (1947); seed 000 §III.B, S12; Holm (1979)";
  // Ties are left out of the test silently otherwise: an item one subject answers right in
  // every draw is dropped when the other's two draws split 1-1 (tester s9 F11).
  j["warnings"] = nlohmann::json::array();
  for (const auto& p : ps.pairs)
    if (p.binary && p.undetermined > 0)
      j["warnings"].push_back(fmt::format(
          "{} vs {} ({}, {}, {}): {} of {} items ({:.1f}%) are left out of McNemar because a subject's majority over "
          "its replicates is a tie (an even replicate count ties often); b and c count only the other {} items",
          p.a, p.b, p.config, p.condition, p.outcome, p.undetermined, p.items,
          100.0 * static_cast<double>(p.undetermined) / static_cast<double>(p.items), p.items - p.undetermined));
  return j;
}

Result<nlohmann::json> run_rerun(AnalysisContext& ctx, const nlohmann::json& options) {
  // metrics/rerun.h (seed 002 §4); options are validated by rerun_options_from_json
  NF_ASSIGN_OR_RETURN(auto ro, rerun_options_from_json(options, ctx.bootstrap));
  NF_ASSIGN_OR_RETURN(auto in, read_rerun_runs(ctx.store, ctx.include_cached));
  NF_ASSIGN_OR_RETURN(nlohmann::json j, rerun_analysis(in.first, in.second, ro));
  if (in.first.empty() && !in.second.empty()) {  // FHIR agent arms whose every draw failed: no table of zeros
    int64_t api = 0, parse = 0;
    for (const auto& [arm, ex] : in.second) {
      api += ex.api_error;
      parse += ex.parse_error;
    }
    j["skipped"] = fmt::format(
        "no FHIR agent run parsed to compare: the study's draws are {} api_error and {} parse_error (api_errors are "
        "retried by re-running the same command; docs/fhir-rerun.md)",
        api, parse);
  }
  return j;
}

}  // namespace

Result<std::vector<int>> majority_vote_sizes(const nlohmann::json& options) { return vote_sizes_of(options); }

const std::vector<AnalysisEntry>& analysis_registry() {
  // {name, summary, run, rows_key, needs}: rows_key "" for an analysis that says itself
  // why it is skipped (the judge analyses, envelope).
  static const std::string kOkDraws =
      "ok draws with outcomes (a store of imported votes or labels has none: run the study or import draws)";
  static const std::vector<AnalysisEntry> kRegistry{
      {"floor", "instability floor per subject x config x condition x outcome (seed 000 §III.B)", run_floor, "rows",
       kOkDraws},
      {"majority_floor", "floor left after a majority vote over R' draws; {\"vote_sizes\": [3, 5]} (seed 000 §D)",
       run_majority_floor, "rows", kOkDraws},
      {"mcq_robustness", "accuracy none vs shuffle (exact McNemar), removal rates (seed 004 §2.4, §3.5)",
       run_mcq_robustness, "rows",
       "`correct` outcomes under the conditions none, shuffle, remove_answer or remove_context (an mcq study with "
       "those conditions)"},
      {"judge_panel", "judge reliability and same-provider effect; {\"focus_subject\": S} (seed 004 §2.6, §3.3)",
       [](AnalysisContext& c, const nlohmann::json& o) { return run_judge_analysis("judge_panel", c, o); }, "", ""},
      {"human_validity", "judges against human raters; {\"strata_fields\": [...]} (seed 004 §3.1, §3.4)",
       [](AnalysisContext& c, const nlohmann::json& o) { return run_judge_analysis("human_validity", c, o); }, "",
       ""},
      {"fairness",
       "descriptor flips vs floor, paired differences, sample sizes (seed 000); options in docs/fairness.md",
       run_fairness, "rows",
       "draws under a reference condition (ref_white_man_private, `reference` by default, or the option "
       "{\"reference\": C}) beside descriptor conditions: a vignettes study with descriptor arms (docs/fairness.md)"},
      {"paired_subjects", "accuracy per subject and exact McNemar between subjects on shared items, Holm",
       run_paired_subjects, "subjects", kOkDraws},
      {"rerun", "same-input rerun of a FHIR agent: order-set, omission, endpoint, trajectory divergence (seed 002 §4)",
       run_rerun, "arms",
       "FHIR agent draws (task fhir_agent: each run's verdict, orders and trajectory; docs/fhir-rerun.md)"},
      {"option_probs", "gold-option probability from logprobs; {\"subjects\": [...]} (issue 6)", run_option_probs,
       "rows", "MCQ draws with option probabilities (a subject with `logprobs: N` served by a server that returns them)"},
      {"envelope", "configuration envelope: SDI, CFR, rho_flip, tau_R, reachable orderings (seed 003); docs/envelope.md",
       run_envelope, "", ""},
      {"bbq_bias", "BBQ bias score s_DIS / s_AMB of a bbq study's draws (Parrish et al. 2022)", run_bbq_bias, "rows",
       "`choice` outcomes of BBQ items (dataset format bbq)"},
  };
  return kRegistry;
}

std::string nothing_to_analyse(const AnalysisEntry& entry) {
  return "nothing to analyse: the store holds no " + entry.needs;
}

Result<nlohmann::json> run_analysis(const AnalysisEntry& entry, AnalysisContext& ctx, const nlohmann::json& options) {
  NF_ASSIGN_OR_RETURN(nlohmann::json section, entry.run(ctx, options));
  if (!section.is_object() || section.contains("skipped") || entry.rows_key.empty()) return section;
  const auto rows = section.find(entry.rows_key);
  if (rows == section.end() || !rows->is_array() || rows->empty()) section["skipped"] = nothing_to_analyse(entry);
  return section;
}

const AnalysisEntry* find_analysis(const std::string& name) {
  for (const auto& e : analysis_registry())
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::string> analysis_names() {
  std::vector<std::string> names;
  for (const auto& e : analysis_registry()) names.push_back(e.name);
  return names;
}

}  // namespace nf
