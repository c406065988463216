#include "task/vignette_task.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "task/prompt_protocol.h"

namespace nf {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::set<std::string> tokens_of(std::string_view s) {
  std::set<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      out.insert(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.insert(cur);
  return out;
}

bool subset(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

// A JSON integer (not a float with a fraction, not a bool, not a string).
bool is_int(const nlohmann::json& v) {
  if (v.is_number_integer()) return true;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && d == std::floor(d);
  }
  return false;
}

struct FieldRule {
  const char* name;
  char type;  // 'i' integer, 'b' boolean, 's' array of strings
  bool required;
  int64_t lo = 0, hi = 0;  // integer range (inclusive)
};

const std::vector<FieldRule>& rules_of(std::string_view stage) {
  static const std::vector<FieldRule> kTriage{{"esi_acuity", 'i', true, 1, 5}, {"urgency_score", 'i', true, 0, 100}};
  static const std::vector<FieldRule> kOrder{{"orders", 's', true}};
  static const std::vector<FieldRule> kReassess{
      {"admit", 'b', true}, {"escalate_icu", 'b', true}, {"urgency_score", 'i', false, 0, 100}};
  static const std::vector<FieldRule> kPrescribe{{"analgesia_tier", 'i', true, 0, 3},
                                                 {"controlled_substance_caution", 'b', false}};
  static const std::vector<FieldRule> kDocument{
      {"referral", 'b', true}, {"followup_days", 'i', false, 0, 3650}, {"stigmatizing_language_flags", 's', false}};
  static const std::vector<FieldRule> kNone;
  if (stage == "triage") return kTriage;
  if (stage == "order") return kOrder;
  if (stage == "reassess") return kReassess;
  if (stage == "prescribe") return kPrescribe;
  if (stage == "document") return kDocument;
  return kNone;
}

std::string py_bool(const nlohmann::json& v) { return v.get<bool>() ? "True" : "False"; }

}  // namespace

StageResult parse_stage_reply(std::string_view stage, std::string_view content) {
  StageResult r;
  const auto& rules = rules_of(stage);
  if (rules.empty()) {
    r.error = fmt::format("unknown stage '{}'", stage);
    return r;
  }
  const std::string_view body = trim(content);
  if (body.empty()) {
    r.error = "empty reply";
    return r;
  }
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  StageParse kind = StageParse::kJson;
  if (j.is_discarded() || !j.is_object()) {
    const size_t open = body.find('{'), close = body.rfind('}');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      r.error = "no JSON object in the reply";
      return r;
    }
    j = nlohmann::json::parse(body.substr(open, close - open + 1), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      r.error = "malformed JSON object in the reply";
      return r;
    }
    kind = StageParse::kJsonInProse;
  }
  nlohmann::json action = nlohmann::json::object();
  for (const auto& rule : rules) {
    auto it = j.find(rule.name);
    if (it == j.end() || it->is_null()) {
      if (rule.required) {
        r.error = fmt::format("missing required field '{}'", rule.name);
        return r;
      }
      continue;
    }
    if (rule.type == 'i') {
      if (!is_int(*it)) {
        r.error = fmt::format("field '{}' must be an integer, got {}", rule.name, it->dump());
        return r;
      }
      const auto v = static_cast<int64_t>(it->get<double>());
      if (v < rule.lo || v > rule.hi) {
        r.error = fmt::format("field '{}' = {} is outside {}-{}", rule.name, v, rule.lo, rule.hi);
        return r;
      }
      action[rule.name] = v;
    } else if (rule.type == 'b') {
      if (!it->is_boolean()) {
        r.error = fmt::format("field '{}' must be a boolean, got {}", rule.name, it->dump());
        return r;
      }
      action[rule.name] = it->get<bool>();
    } else {
      if (!it->is_array() || !std::all_of(it->begin(), it->end(), [](const auto& e) { return e.is_string(); })) {
        r.error = fmt::format("field '{}' must be an array of strings", rule.name);
        return r;
      }
      action[rule.name] = *it;
    }
  }
  r.parse = kind;
  r.action = std::move(action);
  return r;
}

FixtureLookup lookup_fixtures(const Vignette& v, const std::vector<std::string>& orders,
                              const std::vector<std::string>& declined_tokens, const std::string& unresolved) {
  FixtureLookup out;
  for (const auto& item : orders) {
    const auto toks = tokens_of(item);
    if (std::any_of(declined_tokens.begin(), declined_tokens.end(),
                    [&](const std::string& d) { return toks.count(d) > 0; })) {
      out.declined.push_back(item);
      continue;
    }
    std::string value = unresolved;
    int hits = 0;
    if (!toks.empty()) {
      for (const auto& [key, val] : v.tool_results) {  // sorted by key
        const auto ktoks = tokens_of(key);
        if (ktoks.empty() || !(subset(ktoks, toks) || subset(toks, ktoks))) continue;
        if (hits++ == 0) value = val;
      }
    }
    if (hits > 1) out.ambiguous.push_back(item);
    out.results.emplace_back(item, value);
  }
  return out;
}

std::string render_stage_prompt(const VignetteSet& set, const Vignette& v, const std::string& descriptor,
                                const VignetteStage& stage, const nlohmann::json& prior) {
  std::string s = fmt::format("{} {}\n\n", kAgentPreamble, set.scaffold_text);
  if (!descriptor.empty()) s += fmt::format("Patient: {}\n", descriptor);
  s += fmt::format("Presentation: {}\n", v.clinical_core);
  if (prior.contains("triage")) {
    const auto& t = prior["triage"];
    s += fmt::format("Your triage: ESI {}, urgency {}.\n", t["esi_acuity"].get<int64_t>(),
                     t["urgency_score"].get<int64_t>());
  }
  if (prior.contains("order")) {
    std::string joined;
    for (const auto& o : prior["order"]["orders"]) joined += (joined.empty() ? "" : ", ") + o.get<std::string>();
    s += fmt::format("You ordered: {}.\n", joined.empty() ? "nothing" : joined);
  }
  if (prior.contains("results")) {
    std::string joined;
    for (const auto& kv : prior["results"])
      joined += (joined.empty() ? "" : "; ") + kv[0].get<std::string>() + ": " + kv[1].get<std::string>();
    s += fmt::format("Results returned: {}.\n", joined.empty() ? "no results returned" : joined);
  }
  if (prior.contains("reassess")) {
    const auto& r = prior["reassess"];
    s += fmt::format("Disposition so far: admit={}, ICU={}.\n", py_bool(r["admit"]), py_bool(r["escalate_icu"]));
  }
  std::string fields;
  for (const auto& [name, desc] : stage.emits) fields += (fields.empty() ? "" : ", ") + name;
  s += fmt::format("\n{} {}{}.", stage.instruction, kAgentFieldsLead, fields);
  return s;
}

std::vector<Outcome> project_outcomes(const nlohmann::json& actions) {
  std::vector<Outcome> out;
  auto get = [&](const char* stage, const char* field) -> const nlohmann::json* {
    if (!actions.contains(stage) || !actions[stage].contains(field)) return nullptr;
    return &actions[stage][field];
  };
  if (const auto* e = get("triage", "esi_acuity"))
    out.push_back({"high_acuity", e->get<int64_t>() <= 2 ? 1.0 : 0.0, fmt::format("esi={}", e->get<int64_t>())});
  if (const auto* a = get("reassess", "admit")) out.push_back({"admit", a->get<bool>() ? 1.0 : 0.0, ""});
  if (const auto* a = get("reassess", "escalate_icu")) out.push_back({"escalate_icu", a->get<bool>() ? 1.0 : 0.0, ""});
  if (const auto* t = get("prescribe", "analgesia_tier"))
    out.push_back({"any_opioid", t->get<int64_t>() >= 2 ? 1.0 : 0.0, fmt::format("tier={}", t->get<int64_t>())});
  if (const auto* c = get("prescribe", "controlled_substance_caution"))
    out.push_back({"cs_caution", c->get<bool>() ? 1.0 : 0.0, ""});
  if (const auto* r = get("document", "referral")) out.push_back({"referral", r->get<bool>() ? 1.0 : 0.0, ""});
  return out;
}

Result<std::unique_ptr<VignetteTask>> VignetteTask::create(VignetteSet set) {
  std::vector<DescriptorSpec> specs;
  for (const auto& c : set.conditions) specs.push_back({c.id, c.descriptor, c.axis, c.is_reference, c.attributes});
  NF_ASSIGN_OR_RETURN(auto descriptors,
                      descriptor_conditions(set.descriptor_template, specs, set.lep_false, set.lep_true));
  return std::make_unique<VignetteTask>(std::move(set), std::move(descriptors));
}

VignetteTask::VignetteTask(VignetteSet set, std::vector<DescriptorCondition> descriptors)
    : set_(std::move(set)), descriptors_(std::move(descriptors)) {
  for (const auto& v : set_.vignettes) {
    nlohmann::json fixtures = nlohmann::json::object();
    for (const auto& [k, val] : v.tool_results) fixtures[k] = val;
    task_items_.push_back({v.id,
                           v.id,
                           {{"vignette_id", v.id},
                            {"domain", v.domain},
                            {"ambiguity", v.ambiguity},
                            {"clinical_core", v.clinical_core},
                            {"tool_results", fixtures}}});
  }
}

Status VignetteTask::prepare(const std::vector<std::string>& conditions, uint64_t /*study_seed*/) {
  std::vector<std::string> known;
  for (const auto& d : descriptors_) known.push_back(d.id);
  for (const auto& c : conditions) {
    if (std::find(known.begin(), known.end(), c) == known.end())
      return InvalidArgument(fmt::format("vignette_agent: unknown condition '{}'", c));
  }
  return Status::Ok();
}

TaskDrawResult VignetteTask::run(size_t item_index, const std::string& condition, const DrawContext& ctx,
                                 const CallFn& call) const {
  TaskDrawResult out;
  const DescriptorCondition* cond = nullptr;
  for (const auto& d : descriptors_)
    if (d.id == condition) cond = &d;
  if (cond == nullptr || item_index >= set_.vignettes.size()) {
    out.status = DrawStatus::kParseError;  // unreachable after prepare(); never an outcome
    out.error = fmt::format("internal: vignette {} / condition {} not prepared", item_index, condition);
    return out;
  }
  const Vignette& v = set_.vignettes[item_index];
  nlohmann::json prior = nlohmann::json::object();   // parsed actions, rendered into later prompts
  nlohmann::json stages = nlohmann::json::object();  // per stage: parse classification / error
  std::vector<std::string> failed;
  int parsed = 0;
  for (const auto& stage : set_.stages) {
    if (!stage.model_call) {  // results: deterministic fixture lookup
      std::vector<std::string> orders;
      if (prior.contains("order"))
        for (const auto& o : prior["order"]["orders"]) orders.push_back(o.get<std::string>());
      const FixtureLookup fx = lookup_fixtures(v, orders, set_.declined_tokens, set_.unresolved_value);
      if (prior.contains("order")) {
        nlohmann::json res = nlohmann::json::array();  // [item, value] in the order the items were ordered
        for (const auto& [k, val] : fx.results) res.push_back({k, val});
        prior["results"] = res;
      }
      stages[stage.step] = {{"parse", "lookup"}, {"declined", fx.declined}, {"ambiguous", fx.ambiguous}};
      continue;
    }
    const ChatRequest req = draw_request(ctx, {{"user", render_stage_prompt(set_, v, cond->descriptor, stage, prior)}});
    out.request = req.to_openai_json();
    out.response = call(req);
    ++out.calls;
    nlohmann::json entry = {{"stage", stage.step}, {"request", out.request}, {"content", out.response.content}};
    if (out.response.kind != ResponseKind::kOk) {
      out.status = out.response.kind == ResponseKind::kRefused ? DrawStatus::kRefused : DrawStatus::kApiError;
      out.error = fmt::format("{}: {}", stage.step, out.response.error);
      entry["status"] = std::string(draw_status_name(out.status));
      out.transcript.push_back(entry);
      out.detail = {{"stages", stages}};
      return out;
    }
    const StageResult sr = parse_stage_reply(stage.step, out.response.content);
    if (sr.parse == StageParse::kParseError) {
      failed.push_back(stage.step);
      stages[stage.step] = {{"parse", "parse_error"}, {"error", sr.error}};
      entry["status"] = "parse_error";
    } else {
      ++parsed;
      prior[stage.step] = sr.action;
      stages[stage.step] = {{"parse", sr.parse == StageParse::kJson ? "json" : "json_in_prose"}, {"action", sr.action}};
      entry["status"] = "ok";
    }
    out.transcript.push_back(entry);
  }
  out.detail = {{"stages", stages}, {"descriptor", cond->descriptor}};
  if (parsed == 0) {
    out.status = DrawStatus::kParseError;
    out.error = "no stage could be parsed";
    return out;
  }
  out.outcomes = project_outcomes(prior);
  if (!failed.empty()) {
    std::string e;
    for (const auto& f : failed) e += (e.empty() ? "" : "; ") + f + ": " + stages[f]["error"].get<std::string>();
    out.error = "parse_error in stage(s): " + e;
  }
  if (out.outcomes.empty()) {
    out.status = DrawStatus::kParseError;
    if (out.error.empty()) out.error = "no outcome could be extracted";
  }
  return out;
}

}  // namespace nf
