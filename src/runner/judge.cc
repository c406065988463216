#include "runner/judge.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/draw_seed.h"
#include "runner/progress.h"
#include "runner/runner.h"
#include "sim/sim_judge.h"
#include "util/hash.h"
#include "util/strings.h"

namespace nf {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// A verdict value normalised: "met" / "not met" / ... -> 1 / 0, or -1 when unrecognised.
int verdict_word(std::string_view raw) {
  std::string v = to_lower(trim(raw));
  while (!v.empty() && (v.back() == '.' || v.back() == '!')) v.pop_back();
  v = trim(v);
  for (char& c : v)
    if (c == '_' || c == '-') c = ' ';
  // Collapse repeated spaces.
  std::string w;
  for (char c : v)
    if (!(c == ' ' && !w.empty() && w.back() == ' ')) w += c;
  if (w == "met" || w == "yes" || w == "true" || w == "1") return 1;
  if (w == "not met" || w == "notmet" || w == "unmet" || w == "no" || w == "false" || w == "0") return 0;
  return -1;
}

// The vote of one JSON object, nullopt when it has neither key, or an error.
Result<std::optional<int>> object_vote(const nlohmann::json& j) {
  std::optional<int> from_verdict, from_met;
  if (auto it = j.find("verdict"); it != j.end()) {
    int v = -1;
    if (it->is_string()) v = verdict_word(it->get<std::string>());
    else if (it->is_boolean()) v = it->get<bool>() ? 1 : 0;
    else if (it->is_number_integer() && (it->get<int64_t>() == 0 || it->get<int64_t>() == 1))
      v = static_cast<int>(it->get<int64_t>());
    if (v < 0) return InvalidArgument(fmt::format("unrecognised verdict value {}", it->dump()));
    from_verdict = v;
  }
  if (auto it = j.find("met"); it != j.end()) {
    if (!it->is_boolean())  // {"verdict": true, "met": 0}: the two keys cannot be checked to agree
      return InvalidArgument(fmt::format("\"met\" must be true or false, got {}", it->dump()));
    from_met = it->get<bool>() ? 1 : 0;
  }
  if (from_verdict && from_met && *from_verdict != *from_met)
    return InvalidArgument("contradictory verdict: \"verdict\" and \"met\" disagree");
  if (from_verdict) return std::optional<int>(*from_verdict);
  return from_met;
}

// End of the balanced {...} starting at `open` (strings and escapes respected), or npos.
size_t matching_brace(std::string_view t, size_t open) {
  int depth = 0;
  bool in_str = false, esc = false;
  for (size_t i = open; i < t.size(); ++i) {
    const char c = t[i];
    if (in_str) {
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '{') ++depth;
    else if (c == '}' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

std::string strip_markdown(std::string_view line) {
  std::string out;
  for (char c : line)
    if (c != '*' && c != '_' && c != '`' && c != '#' && c != '>') out += c;
  return trim(out);
}

}  // namespace

std::optional<int64_t> judge_request_seed(const JudgeSpec& spec, const SubjectSpec& judge, const DrawKey& key) {
  return draw_request_seed(spec.seed, fnv1a64("judge\n" + judge.name), key);
}

ChatRequest build_judge_request(const JudgeSpec& spec, const SubjectSpec& judge, std::optional<int64_t> seed,
                                const std::vector<ChatMessage>& conversation, const std::string& response) {
  std::string turns;
  for (size_t i = 0; i < conversation.size(); ++i) {
    if (i > 0) turns += "\n\n";
    turns += upper(conversation[i].role) + ": " + conversation[i].content;
  }
  std::string user;
  user += std::string(kJudgeCriterionHeader) + "\n" + spec.criterion + "\n\n";
  user += std::string(kJudgeConversationHeader) + "\n" + turns + "\n\n";
  user += std::string(kJudgeResponseHeader) + "\n" + response + "\n\n";
  user += std::string(kJudgeTaskHeader) + "\n" + std::string(kJudgeInstruction);
  ChatRequest r;
  r.model = judge.model;
  r.messages = {{"system", std::string(kJudgeSystemPrompt)}, {"user", std::move(user)}};
  r.temperature = spec.temperature;
  r.top_p = spec.top_p;
  r.seed = seed;
  r.max_tokens = spec.max_tokens;
  r.extra_body = effective_extra_body(judge);
  return r;
}

Result<std::vector<ChatMessage>> conversation_of_request(const nlohmann::json& request) {
  if (!request.is_object() || !request.contains("messages") || !request["messages"].is_array() ||
      request["messages"].empty())
    return InvalidArgument("request has no non-empty \"messages\" array");
  std::vector<ChatMessage> out;
  for (const auto& m : request["messages"]) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
        !m["content"].is_string())
      return InvalidArgument("request message without a string \"role\" and \"content\"");
    out.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
  }
  return out;
}

namespace {

// The reply's final non-empty line as a verdict (rule 2): nullopt when that line is no
// verdict line at all; an error for a verdict line with an unrecognised value.
std::optional<Result<int>> final_line_vote(std::string_view text) {
  const std::vector<std::string> lines = split(text, '\n');
  std::string line;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    line = strip_markdown(*it);
    if (!line.empty()) break;
  }
  if (const int v = verdict_word(line); v >= 0 && (to_lower(line).rfind("met") != std::string::npos))
    return Result<int>(v);  // a bare MET / NOT MET
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    const std::string head = to_lower(trim(line.substr(0, colon)));
    if (head == "verdict" || head == "final verdict" || head == "label" || head == "answer" || head == "decision") {
      const int v = verdict_word(line.substr(colon + 1));
      if (v >= 0) return Result<int>(v);
      return Result<int>(
          InvalidArgument(fmt::format("unrecognised verdict value '{}'", trim(line.substr(colon + 1)))));
    }
  }
  return std::nullopt;
}

}  // namespace

namespace {

// The verdict of one top-level JSON object of a reply (rule 1): its own "verdict"/"met"
// if it has one (objects nested in it are its details, not verdicts:
// {"verdict":"met","details":{"verdict":"not_met"}} is met); else the verdicts of the
// outermost objects nested in it, which must agree (a per-criterion rubric with met and
// not_met items is no single verdict). nullopt when it holds no verdict.
Result<std::optional<int>> top_object_vote(const nlohmann::json& j) {
  NF_ASSIGN_OR_RETURN(std::optional<int> own, object_vote(j));
  if (own) return own;
  std::optional<int> found;
  int count = 0;
  std::vector<const nlohmann::json*> todo;
  for (const auto& [k, v] : j.items()) todo.push_back(&v);
  while (!todo.empty()) {
    const nlohmann::json* n = todo.back();
    todo.pop_back();
    if (n->is_object()) {
      NF_ASSIGN_OR_RETURN(std::optional<int> v, object_vote(*n));
      if (v) {
        ++count;
        if (found && *found != *v)
          return InvalidArgument("the reply's JSON holds several verdicts that disagree (a per-criterion rubric?): "
                                 "one verdict for the criterion is expected");
        found = v;
        continue;  // its own nested objects are its details
      }
    }
    if (n->is_structured())
      for (const auto& [k, v] : n->items()) todo.push_back(&v);
  }
  return found;
}

}  // namespace

Result<int> parse_verdict(std::string_view text) {
  if (trim(text).empty()) return InvalidArgument("empty judge reply");
  // 1. JSON objects: the last top-level one carrying a verdict wins.
  std::optional<Result<std::optional<int>>> last;
  for (size_t i = text.find('{'); i != std::string_view::npos; i = text.find('{', i + 1)) {
    const size_t end = matching_brace(text, i);
    if (end == std::string_view::npos) continue;
    nlohmann::json j = nlohmann::json::parse(text.substr(i, end - i + 1), nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    auto vote = top_object_vote(j);
    if (!vote.ok() || vote->has_value()) last = std::move(vote);
    i = end;  // the objects inside it were weighed with it
  }
  // 2. The final non-empty line.
  const std::optional<Result<int>> line_vote = final_line_vote(text);
  if (last) {
    if (!last->ok()) return last->status();
    const int v = static_cast<int>(***last);
    // A final verdict line after the JSON must state the same verdict (rule 3: a
    // contradiction is a parse_error, whichever of the two comes last).
    if (line_vote && (!line_vote->ok() || **line_vote != v))
      return InvalidArgument(fmt::format("contradictory verdict: the JSON says {} but the final line says {}",
                                         v == 1 ? "met" : "not_met",
                                         !line_vote->ok() ? line_vote->status().message()
                                         : **line_vote == 1 ? std::string("met")
                                                            : std::string("not_met")));
    return v;
  }
  if (line_vote) return *line_vote;
  return InvalidArgument("no verdict found (no JSON object with \"verdict\" and no final verdict line)");
}

Result<JudgeSummary> run_judges(const Study& study, Store& store, const JudgeOptions& options) {
  Clock& clock = options.clock ? *options.clock : real_clock();
  const JudgeSpec& spec = study.judge;
  if (!spec.enabled || spec.panel.empty())
    return FailedPrecondition(fmt::format("{}: the study has no judge panel (add a `judge:` block with a panel; "
                                          "docs/judging.md)", study.source_path));
  auto rec = store.get_study();
  if (!rec.ok())
    return FailedPrecondition(fmt::format("store {}: no study record; run the chat study or `noisefloor import "
                                          "probe-sheet` into it first", store.path()));
  const std::string task = rec->spec.value("task", std::string());
  if (task != "chat")
    return FailedPrecondition(fmt::format("store {}: its study '{}' is a '{}' task; only stored draws of a chat task "
                                          "can be judged", store.path(), rec->name, task.empty() ? "unknown" : task));

  NF_ASSIGN_OR_RETURN(auto all_draws, store.ok_draws_for_judging());
  struct Unit {
    Store::JudgeableDraw draw;
    std::vector<ChatMessage> conversation;
  };
  std::vector<Unit> units;
  std::map<std::pair<std::string, std::string>, int> per_subject_item;
  for (auto& d : all_draws) {
    auto conv = conversation_of_request(d.request);
    if (!conv.ok()) continue;  // not a chat draw
    ++per_subject_item[{d.key.subject, d.key.item}];
    units.push_back({std::move(d), std::move(*conv)});
  }
  if (units.empty())
    return FailedPrecondition(fmt::format("store {}: holds no ok chat draws (draws whose request has \"messages\") "
                                          "to judge", store.path()));
  // The unit naming is a property of the study's plan, not of what the store holds at the
  // moment (which changes as a run progresses): the bare item id when the plan has one
  // draw per (subject, item): one condition x one config x one replicate; absent fields
  // (imports) count as one. A store holding several draws per (subject, item) anyway
  // (a hand-made store) falls back to the composite name.
  auto plan_count = [&](const char* key) -> int64_t {
    auto it = rec->spec.find(key);
    if (it == rec->spec.end()) return 1;
    if (it->is_array()) return std::max<int64_t>(1, static_cast<int64_t>(it->size()));
    if (it->is_number_integer()) return std::max<int64_t>(1, it->get<int64_t>());
    return 1;
  };
  bool one_per_item = plan_count("conditions") * plan_count("configs") * plan_count("replicates") == 1;
  for (const auto& [k, n] : per_subject_item) one_per_item = one_per_item && n == 1;

  // Settings drift: judgments stored under other settings (criterion, model, decoding)
  // must not be silently mixed with new ones.
  NF_ASSIGN_OR_RETURN(auto stored, store.judgments());
  const std::string criterion_sha_now = sha256_hex(spec.criterion);
  if (!options.refresh) {
    for (const auto& judge : spec.panel) {
      const nlohmann::json now = {{"criterion_sha256", criterion_sha_now}, {"model", judge.model},
                                  {"temperature", spec.temperature},       {"top_p", spec.top_p},
                                  {"seed", spec.seed ? nlohmann::json(*spec.seed) : nlohmann::json(nullptr)},
                                  {"max_tokens", spec.max_tokens}};
      int64_t differing = 0;
      std::string what;
      for (const auto& r : stored) {
        if (r.judge != judge.name || !r.draw_id || r.status == "api_error") continue;
        for (const auto& [k, v] : now.items()) {
          auto it = r.settings.find(k);
          if (it == r.settings.end() || *it == v) continue;
          ++differing;
          if (what.empty())
            what = k == "criterion_sha256" ? std::string("the criterion changed")
                                           : fmt::format("{} was {}, is now {}", k, it->dump(), v.dump());
          break;
        }
      }
      if (differing > 0)
        return FailedPrecondition(fmt::format(
            "judge '{}': {} stored judgment(s) were made with other settings ({}); re-judge them with --refresh, "
            "or give the judge a new name to keep both",
            judge.name, differing, what));
    }
  }

  // Subject providers: the study's, else the stored subject spec's, else the name.
  NF_ASSIGN_OR_RETURN(auto specs, store.subject_specs());
  auto provider_of = [&](const std::string& subject) {
    for (const auto& s : study.subjects)
      if (s.name == subject && !s.provider.empty()) return s.provider;
    if (auto it = specs.find(subject); it != specs.end() && it->second.is_object())
      if (auto p = it->second.find("provider"); p != it->second.end() && p->is_string() && !p->get<std::string>().empty())
        return p->get<std::string>();
    return subject;
  };

  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& j : spec.panel) {
    auto b = make_backend(j);
    if (!b.ok()) return b.status().with_context("judge");
    backends.push_back(std::move(*b));
  }

  NF_ASSIGN_OR_RETURN(auto done, store.judgment_status_by_draw());
  JudgeSummary sum;
  sum.per_judge.resize(spec.panel.size());
  std::vector<std::vector<size_t>> todo(spec.panel.size());
  for (size_t j = 0; j < spec.panel.size(); ++j) {
    JudgeCounts& c = sum.per_judge[j];
    c.judge = spec.panel[j].name;
    for (size_t u = 0; u < units.size(); ++u) {
      ++c.planned;
      auto it = done.find({units[u].draw.id, spec.panel[j].name});
      if (!options.refresh && it != done.end() && it->second != "api_error") ++c.already_done;
      else todo[j].push_back(u);
    }
    sum.planned += c.planned;
    sum.already_done += c.already_done;
  }
  int64_t total_todo = 0;
  for (const auto& t : todo) total_todo += static_cast<int64_t>(t.size());

  const std::string& criterion_sha = criterion_sha_now;
  std::mutex mu;  // guards sum, error
  Status error;
  std::atomic<bool> failed{false};
  std::atomic<int64_t> executed{0}, started{0};
  const double t0 = clock.now_s();
  auto stop_requested = [&] {
    return failed.load() || (options.stop && options.stop->load()) ||
           (options.max_judgments >= 0 && executed.load() >= options.max_judgments);
  };

  auto judge_one = [&](size_t j, const Unit& unit) {
    const SubjectSpec& judge = spec.panel[j];
    Backend& backend = *backends[j];
    const ChatRequest req = build_judge_request(spec, judge, judge_request_seed(spec, judge, unit.draw.key),
                                                unit.conversation, unit.draw.content);
    const ChatResponse resp = backend.complete(req);
    JudgmentRow row;
    row.subject = unit.draw.key.subject;
    row.subject_provider = provider_of(row.subject);
    row.item = one_per_item ? unit.draw.key.item
                            : fmt::format("{}|{}|{}|{}", unit.draw.key.item, unit.draw.key.condition,
                                          unit.draw.key.config, unit.draw.key.replicate);
    row.cluster = unit.draw.cluster;
    row.judge = judge.name;
    row.judge_provider = judge.provider.empty() ? judge.name : judge.provider;
    row.draw_id = unit.draw.id;
    row.settings = {{"temperature", spec.temperature},
                    {"top_p", spec.top_p},
                    {"seed", spec.seed ? nlohmann::json(*spec.seed) : nlohmann::json(nullptr)},
                    {"max_tokens", spec.max_tokens},
                    {"model", judge.model},
                    {"backend", judge.backend},
                    {"backend_identity", backend.identity()},
                    {"served_model", resp.served_model},
                    {"system_fingerprint", resp.system_fingerprint},
                    {"criterion_sha256", criterion_sha}};
    if (resp.kind != ResponseKind::kOk) {
      // A refusal by the judge's provider is not a verdict either; like a transport
      // failure it is retried on the next run.
      row.status = "api_error";
      row.raw_response = resp.error.empty() ? resp.raw_body : resp.error;
      row.settings["error"] = resp.error.empty() ? std::string("refused") : resp.error;
    } else {
      row.raw_response = resp.content;
      auto v = parse_verdict(resp.content);
      if (v.ok()) {
        row.status = "ok";
        row.label = *v;
      } else {
        row.status = "parse_error";
        row.settings["error"] = resp.finish_reason == "length"
                                    ? fmt::format("the reply was cut off at max_tokens ({}) before a verdict: {}",
                                                  spec.max_tokens, v.status().message())
                                    : v.status().message();
      }
    }
    // --refresh whose call failed at the API: a stored verdict (ok or parse_error) is kept,
    // not replaced by the failure (as `run --refresh` keeps a stored answer, runner.cc).
    bool kept = false;
    if (options.refresh && row.status == "api_error") {
      auto it = done.find({unit.draw.id, judge.name});
      kept = it != done.end() && it->second != "api_error";
    }
    Status st = kept ? Status::Ok() : options.refresh ? store.replace_judgments({row}) : store.put_judgments({row});
    if (st.code() == StatusCode::kAlreadyExists) return;  // another `judge` on this store got there first
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      if (!failed.load()) error = st;
      failed = true;
      return;
    }
    executed.fetch_add(1);  // counted only after the commit
    std::lock_guard<std::mutex> lock(mu);
    JudgeCounts& c = sum.per_judge[j];
    ++c.executed;
    if (row.status == "ok") {
      ++c.ok;
      ++sum.ok;
      c.met += *row.label;
    } else if (row.status == "parse_error") {
      ++c.parse_error;
      ++sum.parse_error;
    } else {
      ++c.api_error;
      ++sum.api_error;
      if (kept) ++sum.refresh_kept;
      if (c.first_api_error.empty()) c.first_api_error = row.raw_response;
      if (sum.first_api_error.empty()) sum.first_api_error = judge.name + ": " + row.raw_response;
    }
  };

  std::optional<ProgressLine> progress;
  if (options.progress && total_todo > 0)
    progress.emplace("judge", "judgments", sum.planned, sum.already_done, total_todo, clock, [&] {
      std::lock_guard<std::mutex> lock(mu);
      return ProgressCounts{executed.load(), sum.parse_error, sum.api_error};
    });

  // One pool per judge, `concurrency` threads each (the judge's own limit).
  std::vector<std::thread> pool;
  std::vector<std::unique_ptr<std::atomic<size_t>>> next;
  for (size_t j = 0; j < spec.panel.size(); ++j) next.push_back(std::make_unique<std::atomic<size_t>>(0));
  for (size_t j = 0; j < spec.panel.size(); ++j) {
    const int threads = std::max(1, std::min<int>(spec.panel[j].concurrency, static_cast<int>(todo[j].size())));
    if (todo[j].empty()) continue;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, j] {
        while (!stop_requested()) {
          const size_t idx = next[j]->fetch_add(1);
          if (idx >= todo[j].size()) break;
          if (options.max_judgments >= 0 && started.fetch_add(1) >= options.max_judgments) break;
          judge_one(j, units[todo[j][idx]]);
        }
      });
    }
  }
  for (auto& t : pool) t.join();
  if (progress) progress->stop();

  if (failed) return error;
  sum.executed = executed.load();
  sum.interrupted = sum.already_done + sum.executed < sum.planned;
  sum.seconds = clock.now_s() - t0;
  return sum;
}

}  // namespace nf
