// `noisefloor judge`: re-score stored chat draws with the study's judge panel (seed 004
// §2.5-2.6, Appendix A; docs/judging.md). Every stored ok draw of the chat task is shown
// to every judge with the study's binary criterion; the verdict is parsed robustly and
// stored as one judgment per (draw, judge) with the judge's provider family and its
// pinned generation settings. A judge's API failure is stored as api_error (never a
// vote) and retried by the next run; an unparseable verdict is a parse_error (never a
// vote, not retried). Each judgment is committed as it arrives, so a killed run loses
// at most the judgments in flight and a re-run does only what is missing.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "core/types.h"
#include "spec/study.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/status.h"

namespace nf {

/// The seed sent with `judge`'s request for the stored draw `key`: core/draw_seed.h
/// draw_request_seed over spec.seed (nullopt = no seed sent), the judge's name and the
/// draw key, so judgments never share one sampler stream on a server that honours
/// `seed` (issue 13 item 0) and a re-judged draw gets the same seed again. The recorded
/// judge settings keep spec.seed itself.
std::optional<int64_t> judge_request_seed(const JudgeSpec& spec, const SubjectSpec& judge, const DrawKey& key);

/// The judge request for one judged answer: messages in the layout documented in
/// sim/sim_judge.h (system kJudgeSystemPrompt; one user message with the sections
/// [CRITERION] spec.criterion, [CONVERSATION] the role-labelled turns of `conversation`
/// ("USER: ...", blank line between turns), [RESPONSE] `response`, [TASK] asking for
/// {"verdict": "met"|"not_met", "reason": "..."}); model = judge.model; the pinned
/// settings spec.temperature, spec.top_p, spec.max_tokens; seed = `seed` (the
/// per-judgment seed of judge_request_seed; nullopt = not sent); extra_body =
/// effective_extra_body(judge). Source: seed 004 §2.6, Appendix A (criterion).
ChatRequest build_judge_request(const JudgeSpec& spec, const SubjectSpec& judge, std::optional<int64_t> seed,
                                const std::vector<ChatMessage>& conversation, const std::string& response);

/// The conversation of a stored chat draw: its request's "messages" array of
/// {"role", "content"} (string content; extra fields ignored). InvalidArgument when the
/// request has no non-empty "messages" array or a message lacks a string role/content.
Result<std::vector<ChatMessage>> conversation_of_request(const nlohmann::json& request);

/// Parses a judge's reply into a vote: 1 = criterion met, 0 = not met.
/// Rules (docs/judging.md), in order:
///  1. JSON: every balanced top-level {...} in the text (also inside ```json fences or
///     prose) that parses as an object with a "verdict" or "met" key is a candidate; the
///     LAST candidate wins. Objects nested in a candidate are its details; an object
///     without its own verdict takes those of its nested objects, which must agree.
///     "verdict" may be a string met / not_met / not met / not-met / yes / no / true /
///     false / 1 / 0 (case-insensitive, surrounding spaces and a final '.' ignored), a
///     boolean or the integer 0/1; "met" must be a boolean (else an error). If both keys
///     are present they must agree.
///  2. Otherwise the final non-empty line, with markdown emphasis (* _ ` # >) removed:
///     "<verdict|final verdict|label|answer|decision>: <value>" with a value as above,
///     or a bare "MET" / "NOT MET" (case-insensitive, optional final '.').
///  3. When a JSON verdict is found and the final line is a verdict line (2.), the two
///     must agree; a final line with the other or an unknown value is a contradiction.
/// Errors: InvalidArgument describing why (empty reply, no verdict found, an
/// unrecognised or contradictory value); the caller stores it as a parse_error.
Result<int> parse_verdict(std::string_view text);

struct JudgeOptions {
  bool refresh = false;        // re-judge every (draw, judge), replacing stored judgments
  bool progress = true;        // progress line with rate and ETA on stderr
  int64_t max_judgments = -1;  // stop after this many executed judgments (tests); -1 = all
  const std::atomic<bool>* stop = nullptr;  // set by a signal handler to stop cleanly
  Clock* clock = nullptr;      // nullptr = real_clock()
};

/// Counts for one judge of the panel (this run's executed judgments).
struct JudgeCounts {
  std::string judge;
  int64_t planned = 0, already_done = 0, executed = 0;
  int64_t ok = 0, met = 0, parse_error = 0, api_error = 0;
  std::string first_api_error;
};

struct JudgeSummary {
  int64_t planned = 0;       // chat draws x judges
  int64_t already_done = 0;  // (draw, judge) pairs with an ok / parse_error judgment at start
  int64_t executed = 0;      // judgments committed by this run
  int64_t ok = 0, parse_error = 0, api_error = 0;
  // options.refresh: of the api_error judgments, those whose (draw, judge) held a stored
  // ok or parse_error judgment, which was kept (a failed call never replaces a verdict).
  int64_t refresh_kept = 0;
  bool interrupted = false;
  std::string first_api_error;
  double seconds = 0.0;
  std::vector<JudgeCounts> per_judge;  // in panel order
};

/// Judges every stored ok chat draw with every judge of study.judge.panel, skipping
/// (draw, judge) pairs that already hold an ok or parse_error judgment unless
/// options.refresh (which replaces each stored judgment by the new one, except that a call
/// failing at the API never replaces a stored ok or parse_error judgment: that one is kept,
/// nothing is written, and the failure is counted in api_error and refresh_kept; a stored
/// api_error is replaced). Each judgment row: subject; subject_provider (the study subject's
/// provider, else the stored subject spec's "provider", else the subject name); item =
/// the draw's item id when the study's plan (its stored record: conditions x configs x
/// replicates, absent = 1) has one draw per (subject, item) and the store agrees, else
/// "item|condition|config|replicate" (so units never collide; stable while a run
/// progresses); cluster = the draw's
/// cluster; judge = the judge's name; judge_provider = its provider; label 1 = criterion
/// met; status ok / parse_error / api_error (label null for the last two); draw_id;
/// raw_response = the judge's reply text (api_error: the error); settings = {"temperature",
/// "top_p", "seed", "max_tokens", "model", "backend", "backend_identity", "served_model",
/// "system_fingerprint", "criterion_sha256"} (plus "error" for an api_error or parse_error).
/// Each judge runs `concurrency` requests at a time; every judgment is committed on
/// arrival. Judgments stored by a judge of the same name under other settings (criterion,
/// model, temperature, top_p, seed, max_tokens) stop the run unless options.refresh:
/// FailedPrecondition naming the judge and the first difference.
/// Errors: FailedPrecondition when the study has no judge panel, the store has
/// no study record, its study is not a chat task, or it holds no ok chat draws;
/// InvalidArgument from make_backend; DataLoss on a store write failure. Judge API
/// failures are not errors of the run: they are stored and counted.
Result<JudgeSummary> run_judges(const Study& study, Store& store, const JudgeOptions& options);

}  // namespace nf
