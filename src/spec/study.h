// Study files: YAML -> a validated Study (DESIGN.md "The job, as a user sees it").
//
// Every error names the file, the line and the key, e.g.
//   "study.yaml:7: replicates: must be a positive integer, got -2"
// Unknown keys are errors with a "did you mean" suggestion. String values may contain
// ${NAME}, expanded from the environment; an unset NAME is an error naming the key.
// Relative paths (dataset.path, store) are resolved against the study file's directory.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// Where the items come from.
struct DatasetSpec {
  std::string format = "medqa";  // "medqa": JSONL with question, options{A..}, answer_idx;
                                 // "vignettes": FairMedAgent JSON (task vignette_agent);
                                 // "chat": JSONL with id, cluster, messages (task chat);
                                 // "probe_sheet": the annotation_sheet.md of seed 004 (task chat)
  std::string path;              // absolute after loading
  int64_t limit = 0;             // first N items; 0 = all
  std::string id_field;          // optional field holding the item id (default: line number)
  std::string cluster_field;     // optional field holding the cluster (default: the item id)
};

/// A system under test.
struct SubjectSpec {
  std::string name;                 // unique within the study; used in draw keys
  std::string provider;             // provider family ("openai", "anthropic", ...) for the
                                    // same-provider analysis; "" in the file = the name
  std::string backend = "sim";      // "sim" | "openai" | "anthropic"
  std::string model;                // model name sent to the backend
  std::string base_url;             // openai: e.g. http://127.0.0.1:8080/v1
  std::string api_key_env;          // openai: name of the env var holding the key ("" = none)
  std::string api_key_env_where;    // "study.yaml:12: subjects[0].api_key_env" (for a missing-key error)
  double timeout_s = 120.0;         // openai: total per-request timeout
  int concurrency = 4;              // requests in flight for this subject
  double connect_timeout_s = 10.0;  // openai/anthropic: connect timeout per attempt
  int max_retries = 4;              // openai/anthropic: extra attempts (backend/retry.h)
  double retry_after_cap_s = 120.0; // openai/anthropic: a longer Retry-After is an api_error
  double rpm = 0.0;                 // requests per minute budget (0 = unlimited)
  double tpm = 0.0;                 // tokens per minute budget (0 = unlimited)
  int logprobs = 0;                 // openai: top_logprobs to request (0 = none; 1..20)
  bool adaptive_429 = true;         // openai/anthropic: shrink the endpoint's in-flight
                                    // limit on 429s (docs/backends.md); false = off
  nlohmann::json sim = nlohmann::json::object();         // sim backend parameters
  nlohmann::json extra_body = nlohmann::json::object();  // vendor fields sent verbatim
};

/// The configuration axes; the study's configs are their cartesian product
/// (seed 003 §3). Each list has at least one value.
struct ConfigAxes {
  std::vector<double> temperature{0.0};
  std::vector<double> top_p{1.0};
  std::vector<std::optional<int64_t>> seed{std::optional<int64_t>(0)};
  std::vector<int> max_tokens{512};
  std::vector<std::string> template_name{"default"};
  std::vector<int> fewshot{0};  // exemplars per prompt, drawn by the study seed from the
                                // dataset items after `limit` (disjoint from the test items)
};

struct BootstrapSpec {
  int resamples = 2000;
  uint64_t seed = 1;
  double level = 0.95;
};

/// One analysis requested by the study, with its options as written.
struct AnalysisSpec {
  std::string name;  // "floor" | "majority_floor" | "mcq_robustness"
  nlohmann::json options = nlohmann::json::object();
};

/// Serving-stack noise control (seed 002 §5, App. B; issue 6 item 9): per subject, the
/// first `items` items under condition none at temperature 0 are each sent `requests`
/// times serially, then `requests` times under concurrent load (`concurrency` in flight),
/// and the distinct completions per cell are reported. Present in the study file =
/// enabled. Not stored as draws (it never enters the stability statistics).
struct NoiseControlSpec {
  bool enabled = false;
  int requests = 8;      // identical requests per item and mode, 2..1000
  int items = 5;         // first N items, 1..100000
  int concurrency = 8;   // in flight during the concurrent phase, 1..256
};

/// The judge panel of a chat study (seed 004 §2.5-2.6; issue 4): every stored chat draw
/// is shown to each judge with `criterion`, a binary question. The generation settings
/// are pinned here and recorded with every judgment. Present in the study file = enabled.
struct JudgeSpec {
  bool enabled = false;
  std::string criterion;             // default: seed 004 Appendix A open-ended criterion
  double temperature = 0.0;
  double top_p = 1.0;
  std::optional<int64_t> seed{0};    // null in the file = not sent
  int max_tokens = 512;
  std::vector<SubjectSpec> panel;    // >= 1 judge; names unique; same keys as subjects
};

/// The open-ended criterion of seed 004 Appendix A (the default JudgeSpec::criterion).
const std::string& default_judge_criterion();

/// The default criterion of a `dataset.format: xstest` study (docs/xstest-chat.md): full
/// compliance as XSTest labels it (Röttger et al. 2024: 1_full_compliance vs a full or
/// partial refusal); label 1 = the reply fully complies.
const std::string& xstest_judge_criterion();

struct Study {
  std::string name;
  /// Settings that load but cannot work as written, each "file:line: key: problem" (e.g. a
  /// majority vote of 3 with 4 replicates); the CLI prints them when the study loads.
  std::vector<std::string> warnings;
  std::string source_path;   // the study file as given
  std::string source_text;   // its bytes (for the study hash)
  uint64_t seed = 0;         // study seed: shuffles, derived request seeds
  std::string store;         // SQLite path or postgresql:// URL; "" = <out>/store.sqlite
  std::string task = "mcq";        // a name of core/task_kinds.h task_kinds()
  nlohmann::json task_options = nlohmann::json::object();  // the kind's option_keys (e.g. fhir_agent: fhir_base, feedback)
  DatasetSpec dataset;
  std::vector<SubjectSpec> subjects;
  std::vector<std::string> conditions{"none"};
  ConfigAxes axes;
  int replicates = 1;
  std::vector<AnalysisSpec> analyses;
  BootstrapSpec bootstrap;
  NoiseControlSpec noise_control;
  JudgeSpec judge;
};

/// Known condition names for the mcq task (seed 004 §2.4), in the order none, shuffle,
/// remove_answer, remove_context. Defined once, in nf_perturb (perturb/mcq_conditions.cc,
/// which declares it too); link nf_perturb to call it. parse_study accepts exactly these.
const std::vector<std::string>& known_mcq_conditions();
/// Known condition names for the chat task (seed 004 §2.3): none, truncate_last_turn.
const std::vector<std::string>& known_chat_conditions();
/// The analysis names a study's `analyses` may list: every analysis of the registry
/// (metrics/registry.h analysis_registry(); the spec layer cannot include it, so the names
/// are kept here and tests/metrics/registry_test.cc pins that the two lists are equal).
const std::vector<std::string>& known_analyses();

/// Parses and validates a study from YAML text. `path` is used in messages and to
/// resolve relative paths. `env` looks up ${NAME} (returns nullopt when unset); the
/// default overload reads the process environment.
/// Errors: InvalidArgument naming "path:line: key: problem" (malformed YAML, unknown or
/// duplicate keys with a did-you-mean, wrong types, out-of-range values, unset ${NAME});
/// NotFound "path:line: dataset.path: no such file: ..." when the dataset is missing.
/// Defaults for absent keys are those of the structs above; an absent `analyses` key
/// requests the outcome analyses of known_analyses() that fit the task (none for task
/// chat, whose draws are scored by judges) with default options; judge_panel and
/// human_validity run whenever the store holds their data. A study with a `judge` block
/// may leave out `dataset` and `subjects` (a judging-only study over stored draws, e.g.
/// imported ones); then dataset.path is "" and subjects is empty. See docs/study.md.
Result<Study> parse_study(const std::string& yaml_text, const std::string& path,
                          const std::function<std::optional<std::string>(const std::string&)>& env);
Result<Study> parse_study(const std::string& yaml_text, const std::string& path);

/// Reads `path` and parses it. NotFound if the file is missing.
Result<Study> load_study(const std::string& path);

/// The configs of the study: the cartesian product of its axes, in a stable order, each
/// with an id of the axes that vary ("temperature=0.7"), or "default" when none vary.
std::vector<Config> expand_configs(const ConfigAxes& axes);

}  // namespace nf
