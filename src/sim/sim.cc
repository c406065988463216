#include "sim/sim.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numeric>
#include <optional>

#include "sim/sim_agent.h"
#include "sim/sim_chat.h"
#include "sim/sim_fhir_agent.h"
#include "sim/sim_judge.h"
#include "sim/sim_refusal.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {

namespace {

const std::vector<std::string>& sim_param_keys() {
  static const std::vector<std::string> k = {"seed",           "spread",        "abstain_logit",
                                             "parse_error_rate", "clarify_rate",  "clarify_rate_truncated",
                                             "judge_leniency",   "judge_flip_rate", "judge_garbage_rate",
                                             "answer_key",       "gold_logit",      "gold_logit_when",
                                             "refusal_rate",     "refusal_rate_unsafe", "hidden_refusal_share",
                                             "refusal_key"};
  return k;
}

Result<double> finite_param(const nlohmann::json& v, const std::string& key) {
  if (!v.is_number()) return InvalidArgument("sim params: '" + key + "' must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) return InvalidArgument("sim params: '" + key + "' must be finite");
  return x;
}

int64_t word_count(std::string_view s) {
  int64_t n = 0;
  bool in_word = false;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

std::string letter(size_t i) { return std::string(1, static_cast<char>('A' + i)); }

// The reasoning templates; {T} is the chosen option's text, {L} its letter.
constexpr std::array<std::string_view, 5> kReasoning = {
    "The details in the question point most directly to {T}. The other options fit the "
    "presentation less well.",
    "Weighing each option in turn, {T} is the most consistent with what is described.",
    "Considering the key findings, the best choice here is {T}; the alternatives leave "
    "important features unexplained.",
    "Option {L}, {T}, accounts for the findings better than the other choices.",
    "Working through the question step by step, the evidence favours {T} over the rest.",
};

// Replies with no extractable letter (parse errors by construction).
constexpr std::array<std::string_view, 3> kUnparseable = {
    "The information given does not allow one best choice to be determined.",
    "Several of these options seem equally plausible here, so it would be a guess to pick one.",
    "This question cannot be settled without more details about the case.",
};

std::string fill(std::string_view tmpl, std::string_view text, std::string_view let) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl.substr(i, 3) == "{T}") {
      out += text;
      i += 2;
    } else if (tmpl.substr(i, 3) == "{L}") {
      out += let;
      i += 2;
    } else {
      out += tmpl[i];
    }
  }
  return out;
}

ChatResponse api_error(std::string why) {
  ChatResponse r;
  r.kind = ResponseKind::kApiError;
  r.error = "invalid request: " + std::move(why);
  r.finish_reason = "";
  return r;
}

// Probabilities from logits at temperature T with nucleus truncation (see sim.h).
std::vector<double> probabilities_from_logits(const std::vector<double>& logits, double temperature,
                                              double top_p) {
  const size_t n = logits.size();
  std::vector<double> p(n, 0.0);
  if (n == 0) return p;
  if (temperature <= 0.0) {
    size_t best = 0;
    for (size_t i = 1; i < n; ++i) {
      if (logits[i] > logits[best]) best = i;
    }
    p[best] = 1.0;
    return p;
  }
  const double mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    p[i] = std::exp((logits[i] - mx) / temperature);
    sum += p[i];
  }
  for (auto& x : p) x /= sum;
  if (top_p < 1.0) {
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
    double cum = 0.0;
    size_t keep = 0;
    while (keep < n) {
      cum += p[order[keep]];
      ++keep;
      if (cum >= top_p - 1e-12) break;
    }
    std::vector<double> q(n, 0.0);
    double kept = 0.0;
    for (size_t k = 0; k < keep; ++k) kept += p[order[k]];
    for (size_t k = 0; k < keep; ++k) q[order[k]] = p[order[k]] / kept;
    p = std::move(q);
  }
  return p;
}

}  // namespace

Result<SimParams> SimParams::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("sim params: must be a JSON object");
  SimParams p;
  for (const auto& [key, value] : j.items()) {
    if (key == "seed") {
      if (value.is_number_unsigned()) {
        p.seed = value.get<uint64_t>();
      } else if (value.is_number_integer() && value.get<int64_t>() >= 0) {
        p.seed = static_cast<uint64_t>(value.get<int64_t>());
      } else {
        return InvalidArgument("sim params: 'seed' must be a non-negative integer");
      }
    } else if (key == "spread") {
      NF_ASSIGN_OR_RETURN(p.spread, finite_param(value, key));
      if (p.spread < 0.0) return InvalidArgument("sim params: 'spread' must be >= 0");
    } else if (key == "abstain_logit") {
      NF_ASSIGN_OR_RETURN(p.abstain_logit, finite_param(value, key));
    } else if (double* rate = key == "parse_error_rate"         ? &p.parse_error_rate
                              : key == "clarify_rate"           ? &p.clarify_rate
                              : key == "clarify_rate_truncated" ? &p.clarify_rate_truncated
                              : key == "judge_leniency"         ? &p.judge_leniency
                              : key == "judge_flip_rate"        ? &p.judge_flip_rate
                              : key == "judge_garbage_rate"     ? &p.judge_garbage_rate
                              : key == "refusal_rate"           ? &p.refusal_rate
                              : key == "refusal_rate_unsafe"    ? &p.refusal_rate_unsafe
                              : key == "hidden_refusal_share"   ? &p.hidden_refusal_share
                                                                : nullptr) {
      if (key.rfind("refusal", 0) == 0 || key == "hidden_refusal_share") p.refusal_mode = true;
      NF_ASSIGN_OR_RETURN(*rate, finite_param(value, key));
      if (*rate < 0.0 || *rate > 1.0) {
        return InvalidArgument("sim params: '" + key + "' must be in [0, 1]");
      }
    } else if (key == "gold_logit") {
      NF_ASSIGN_OR_RETURN(p.gold_logit, finite_param(value, key));
    } else if (key == "gold_logit_when") {
      if (!value.is_array()) return InvalidArgument("sim params: 'gold_logit_when' must be a list");
      for (const auto& r : value) {
        if (!r.is_object() || !r.contains("contains") || !r["contains"].is_string() ||
            r["contains"].get<std::string>().empty() || !r.contains("add") || r.size() != 2)
          return InvalidArgument("sim params: 'gold_logit_when' entries are {contains: TEXT, add: NUMBER}");
        NF_ASSIGN_OR_RETURN(double add, finite_param(r["add"], "gold_logit_when.add"));
        p.gold_logit_when.push_back({r["contains"].get<std::string>(), add});
      }
    } else if (key == "refusal_key") {  // sim/sim_refusal.h
      if (!value.is_string() || value.get<std::string>().empty())
        return InvalidArgument("sim params: 'refusal_key' must be a file path");
      p.refusal_key = value.get<std::string>();
      p.refusal_mode = true;
      NF_ASSIGN_OR_RETURN(p.refusal_labels, read_sim_refusal_key(p.refusal_key));
    } else if (key == "answer_key") {
      if (!value.is_string() || value.get<std::string>().empty())
        return InvalidArgument("sim params: 'answer_key' must be a file path");
      p.answer_key = value.get<std::string>();
      NF_ASSIGN_OR_RETURN(const std::string text, read_file(p.answer_key));
      auto gold = std::make_shared<std::map<std::string, std::string>>();
      size_t line_no = 0;
      for (const auto& line : split(text, '\n')) {
        ++line_no;
        if (trim(line).empty()) continue;
        const auto where = p.answer_key + ":" + std::to_string(line_no);
        const auto row = nlohmann::json::parse(line, nullptr, false);
        if (row.is_discarded() || !row.is_object()) return InvalidArgument(where + ": not a JSON object");
        if (!row.contains("question") || !row["question"].is_string())
          return InvalidArgument(where + ": question: missing or not a string");
        if (!row.contains("options") || !row["options"].is_object())
          return InvalidArgument(where + ": options: missing or not an object");
        if (!row.contains("answer_idx") && !row.contains("answer"))
          return InvalidArgument(where + ": answer_idx: missing");
        // answer_idx is the gold letter (MedQA); without it, `answer` is a letter or an option text.
        const auto& a = row.contains("answer_idx") ? row["answer_idx"] : row["answer"];
        std::string gold_text;
        if (a.is_string() && row["options"].contains(a.get<std::string>()) && row["options"][a.get<std::string>()].is_string())
          gold_text = row["options"][a.get<std::string>()].get<std::string>();
        else if (!row.contains("answer_idx") && a.is_string())
          for (const auto& [l, t] : row["options"].items())
            if (t.is_string() && t.get<std::string>() == a.get<std::string>()) gold_text = a.get<std::string>();
        if (gold_text.empty())
          return InvalidArgument(where + (row.contains("answer_idx") ? ": answer_idx" : ": answer") +
                                 ": not the letter or text of one option");
        (*gold)[trim(row["question"].get<std::string>())] = gold_text;
      }
      p.gold = std::move(gold);
    } else {
      return InvalidArgument("sim params: unknown key '" + key + "'" + did_you_mean(key, sim_param_keys()));
    }
  }
  return p;
}

nlohmann::json SimParams::to_json() const {
  nlohmann::json j{{"seed", seed},
          {"spread", spread},
          {"abstain_logit", abstain_logit},
          {"parse_error_rate", parse_error_rate},
          {"clarify_rate", clarify_rate},
          {"clarify_rate_truncated", clarify_rate_truncated},
          {"judge_leniency", judge_leniency},
          {"judge_flip_rate", judge_flip_rate},
          {"judge_garbage_rate", judge_garbage_rate}};
  if (!answer_key.empty() || gold_logit != 0.0 || !gold_logit_when.empty()) {  // old hashes unchanged
    j["answer_key"] = answer_key;
    j["gold_logit"] = gold_logit;
    j["gold_logit_when"] = nlohmann::json::array();
    for (const auto& r : gold_logit_when) j["gold_logit_when"].push_back({{"contains", r.contains}, {"add", r.add}});
  }
  if (refusal_mode) {  // old hashes unchanged
    j["refusal_rate"] = refusal_rate;
    j["refusal_rate_unsafe"] = refusal_rate_unsafe;
    j["hidden_refusal_share"] = hidden_refusal_share;
    if (!refusal_key.empty()) j["refusal_key"] = refusal_key;
  }
  return j;
}

std::string SimParams::short_hash() const { return hex64(fnv1a64(to_json().dump())).substr(0, 12); }

bool is_abstain_option(std::string_view option_text) {
  return option_text == "None of the other answers is correct." ||
         option_text == "There is not enough information to answer this question.";
}

bool parse_sim_mcq_prompt(std::string_view text, SimMcqPrompt& out) {
  const std::vector<std::string> lines = split(text, '\n');
  auto option_line = [&](size_t i, char want, std::string& opt) {
    std::string_view l = lines[i];
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.size() < 4 || l[0] != want || l[1] != '.' || l[2] != ' ') return false;
    opt = std::string(l.substr(3));
    return true;
  };
  for (size_t first = 0; first < lines.size(); ++first) {
    std::string opt;
    if (!option_line(first, 'A', opt)) continue;
    SimMcqPrompt p;
    p.options.push_back(opt);
    for (size_t i = first + 1; i < lines.size() && p.options.size() < 10; ++i) {
      if (!option_line(i, static_cast<char>('A' + p.options.size()), opt)) break;
      p.options.push_back(opt);
    }
    std::string stem;
    for (size_t i = 0; i < first; ++i) {
      stem += lines[i];
      stem += '\n';
    }
    p.stem = trim(stem);
    out = std::move(p);
    return true;
  }
  return false;
}

uint64_t messages_hash(const std::vector<ChatMessage>& messages) {
  uint64_t h = fnv1a64("");
  for (const auto& m : messages) {
    h = fnv1a64(m.role, h);
    h = fnv1a64("\x1f", h);
    h = fnv1a64(m.content, h);
    h = fnv1a64("\x1e", h);
  }
  return h;
}

nlohmann::json openai_response_json(const ChatResponse& r, std::string_view id, int64_t created) {
  nlohmann::json usage = nlohmann::json::object();
  if (r.prompt_tokens >= 0) usage["prompt_tokens"] = r.prompt_tokens;
  if (r.completion_tokens >= 0) usage["completion_tokens"] = r.completion_tokens;
  if (r.prompt_tokens >= 0 && r.completion_tokens >= 0) {
    usage["total_tokens"] = r.prompt_tokens + r.completion_tokens;
  }
  return {
      {"id", std::string(id)},
      {"object", "chat.completion"},
      {"created", created},
      {"model", r.served_model},
      {"system_fingerprint", r.system_fingerprint},
      {"choices",
       nlohmann::json::array({{{"index", 0},
                               {"message", {{"role", "assistant"}, {"content", r.content}}},
                               {"logprobs", r.logprobs.is_null() ? nlohmann::json(nullptr) : r.logprobs},
                               {"finish_reason", r.finish_reason}}})},
      {"usage", usage},
  };
}

SimBackend::SimBackend(SimParams params) : params_(params), hash_(params.short_hash()) {}

std::string SimBackend::identity() const { return "sim:" + hash_; }

double SimBackend::gold_bonus(std::string_view prompt) const {
  double b = params_.gold_logit;
  for (const auto& r : params_.gold_logit_when)
    if (prompt.find(r.contains) != std::string_view::npos) b += r.add;
  return b;
}

std::vector<double> SimBackend::option_logits(std::string_view model, std::string_view stem,
                                              const std::vector<std::string>& option_texts,
                                              std::string_view prompt) const {
  std::vector<double> logits;
  logits.reserve(option_texts.size());
  const uint64_t hm = fnv1a64(model);
  const uint64_t hs = fnv1a64(stem);
  for (const auto& text : option_texts) {
    Rng rng = Rng::stream(params_.seed, {hm, hs, fnv1a64(text)});
    double l = params_.spread * rng.normal();
    if (is_abstain_option(text)) l += params_.abstain_logit;
    logits.push_back(l);
  }
  if (params_.gold) {
    if (auto it = params_.gold->find(std::string(stem)); it != params_.gold->end()) {
      const double b = gold_bonus(prompt);
      for (size_t i = 0; i < option_texts.size(); ++i)
        if (option_texts[i] == it->second) logits[i] += b;
    }
  }
  return logits;
}

std::vector<double> SimBackend::option_probabilities(std::string_view model, std::string_view stem,
                                                     const std::vector<std::string>& option_texts,
                                                     double temperature, double top_p,
                                                     std::string_view prompt) const {
  return probabilities_from_logits(option_logits(model, stem, option_texts, prompt), temperature, top_p);
}

std::vector<std::string> sim_reply_tokens(std::string_view text) {
  std::vector<std::string> out;
  const size_t tag = text.rfind("<answer>");
  if (tag == std::string_view::npos) {
    if (!text.empty()) out.emplace_back(text);
    return out;
  }
  if (tag > 0) out.emplace_back(text.substr(0, tag));
  out.insert(out.end(), {"<", "answer", ">"});
  std::string_view rest = text.substr(tag + 8);
  const size_t close = rest.find("</answer>");
  const std::string_view inner = close == std::string_view::npos ? rest : rest.substr(0, close);
  if (!inner.empty()) out.emplace_back(inner);
  if (close != std::string_view::npos) {
    out.insert(out.end(), {"</", "answer", ">"});
    if (close + 9 < rest.size()) out.emplace_back(rest.substr(close + 9));
  }
  return out;
}

nlohmann::json sim_mcq_logprobs(const SimBackend& sim, const ChatRequest& request, const std::string& reply) {
  const auto& x = request.extra_body;
  const auto lp = x.find("logprobs");
  const auto top = x.find("top_logprobs");
  if (lp == x.end() || !lp->is_boolean() || !lp->get<bool>() || top == x.end() || !top->is_number_integer())
    return nullptr;
  const int n = std::clamp(top->get<int>(), 0, 20);
  const ChatMessage* last_user = nullptr;
  for (const auto& m : request.messages)
    if (m.role == "user") last_user = &m;
  SimMcqPrompt prompt;
  if (last_user == nullptr || !parse_sim_mcq_prompt(last_user->content, prompt)) return nullptr;
  const std::vector<double> p = sim.option_probabilities(request.model, prompt.stem, prompt.options, 1.0, 1.0,
                                                         last_user->content);
  std::vector<size_t> order(p.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  // The answer position: the token right after the last "<", "answer", ">".
  const std::vector<std::string> tokens = sim_reply_tokens(reply);
  std::optional<size_t> answer_at;
  for (size_t i = 0; i + 3 < tokens.size(); ++i)
    if (tokens[i] == "<" && tokens[i + 1] == "answer" && tokens[i + 2] == ">") answer_at = i + 3;
  nlohmann::json content = nlohmann::json::array();
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (answer_at && i == *answer_at) {
      nlohmann::json tops = nlohmann::json::array();
      double answer_lp = -9999.0;
      for (size_t k = 0; k < order.size(); ++k) {
        const std::string let(1, static_cast<char>('A' + order[k]));
        const double l = p[order[k]] > 0 ? std::log(p[order[k]]) : -9999.0;
        if (let == tokens[i]) answer_lp = l;
        if (static_cast<int>(k) < n) tops.push_back({{"token", let}, {"logprob", l}});
      }
      content.push_back({{"token", tokens[i]}, {"logprob", answer_lp}, {"top_logprobs", std::move(tops)}});
    } else {
      // Every other token is certain under the sim: logprob 0, the only alternative listed.
      nlohmann::json tops = nlohmann::json::array();
      if (n > 0) tops.push_back({{"token", tokens[i]}, {"logprob", 0.0}});
      content.push_back({{"token", tokens[i]}, {"logprob", 0.0}, {"top_logprobs", std::move(tops)}});
    }
  }
  return {{"content", std::move(content)}};
}

ChatResponse SimBackend::complete(const ChatRequest& request) {
  if (!std::isfinite(request.temperature) || request.temperature < 0.0) {
    return api_error("temperature must be a finite number >= 0");
  }
  if (!(request.top_p > 0.0 && request.top_p <= 1.0)) return api_error("top_p must be in (0, 1]");
  const ChatMessage* last_user = nullptr;
  for (const auto& m : request.messages) {
    if (m.role == "user") last_user = &m;
  }
  if (last_user == nullptr) return api_error("no user message");

  const bool greedy = request.temperature == 0.0;
  uint64_t seed_id = 0;
  if (!greedy) {
    seed_id = request.seed ? static_cast<uint64_t>(*request.seed)
                           : mix64(unseeded_counter_.fetch_add(1) ^ 0x5eedULL);
  }
  const uint64_t hmsg = messages_hash(request.messages);
  // A seeded sampled request draws its uniforms from the seed alone, as llama.cpp and vLLM
  // seed their samplers: equal seeds repeat one stream whatever the prompt (issue 13 item
  // 0). Greedy and unseeded requests keep a stream of their own per request.
  Rng rng = (!greedy && request.seed)
                ? Rng::stream(params_.seed, {0x5eed'5eedULL, seed_id})
                : Rng::stream(params_.seed, {fnv1a64(request.model), hmsg, seed_id,
                                             std::bit_cast<uint64_t>(request.temperature),
                                             std::bit_cast<uint64_t>(request.top_p)});
  // Fixed draw order: choice, parse error, template.
  const double u_choice = rng.uniform();
  const double u_parse = rng.uniform();
  const uint64_t r_template = rng.next_u64();

  ChatResponse resp;
  SimMcqPrompt prompt;
  SimJudgePrompt judge_prompt;
  if (auto fhir = sim_fhir_agent_reply(request, params_.seed)) {  // sim/sim_fhir_agent.h
    if (!fhir->ok()) return api_error(fhir->status().message());
    resp.content = std::move(*fhir).value();
  } else if (auto agent = sim_agent_reply(request, last_user->content, params_.seed, r_template)) {  // sim/sim_agent.h
    if (!agent->ok()) return api_error(agent->status().message());
    resp.content = std::move(*agent).value();
  } else if (parse_sim_judge_prompt(request, judge_prompt)) {  // sim/sim_judge.h
    auto behaviour = sim_judge_behaviour(
        request.extra_body, {params_.judge_leniency, params_.judge_flip_rate, params_.judge_garbage_rate});
    if (!behaviour.ok()) return api_error(behaviour.status().message());
    const double u_garbage = rng.uniform();  // drawn after the fixed three
    const double u_lenient = rng.uniform();
    const double u_flip = rng.uniform();
    resp.content = sim_judge_reply(judge_prompt, *behaviour, u_garbage, u_lenient, u_flip, r_template);
  } else if (parse_sim_mcq_prompt(last_user->content, prompt)) {
    const std::vector<double> p =
        option_probabilities(request.model, prompt.stem, prompt.options, request.temperature, request.top_p,
                             last_user->content);
    size_t chosen = p.size() - 1;
    double cum = 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
      cum += p[i];
      if (u_choice < cum && p[i] > 0.0) {
        chosen = i;
        break;
      }
    }
    while (chosen > 0 && p[chosen] == 0.0) --chosen;  // rounding guard
    if (u_parse < params_.parse_error_rate) {
      resp.content = std::string(kUnparseable[r_template % kUnparseable.size()]);
    } else {
      const std::string let = letter(chosen);
      resp.content = fill(kReasoning[r_template % kReasoning.size()], prompt.options[chosen], let) +
                     "\n\n<answer>" + let + "</answer>";
    }
    // Asked for logprobs (extra_body logprobs/top_logprobs, as a subject's `logprobs: N` sends).
    resp.logprobs = sim_mcq_logprobs(*this, request, resp.content);
  } else if (params_.refusal_mode) {  // XSTest-style compliance / refusal (sim/sim_refusal.h)
    const SimRefusalParams rp{params_.refusal_rate, params_.refusal_rate_unsafe, params_.hidden_refusal_share,
                              params_.refusal_labels};
    resp.content = sim_refusal_reply(sim_refusal_kind(rp, last_user->content, u_choice, u_parse), r_template);
  } else {  // free-text chat (sim/sim_chat.h)
    resp.content = sim_chat_reply(last_user->content, params_.clarify_rate, params_.clarify_rate_truncated, u_choice,
                                  r_template);
  }
  resp.kind = ResponseKind::kOk;
  resp.finish_reason = "stop";
  resp.served_model = request.model;
  resp.system_fingerprint = "sim-" + hash_;
  int64_t prompt_words = 0;
  for (const auto& m : request.messages) prompt_words += word_count(m.content);
  resp.prompt_tokens = prompt_words;
  resp.completion_tokens = word_count(resp.content);
  const uint64_t id = hash_combine(hash_combine(hmsg, seed_id), std::bit_cast<uint64_t>(request.temperature));
  resp.raw_body = openai_response_json(resp, "chatcmpl-sim-" + hex64(id), 0)
                      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return resp;
}

}  // namespace nf
